#pragma once
// One legend for all the live charts, above them: a coloured mark and the
// name of every shown run that has measured something (queued runs and
// runs that failed before their first step are left out). The charts then
// need no legends of their own over or under their plots.
#include <QLabel>
#include <vector>

#include "report/run_report.h"

namespace plab::ui {

class RunLegend : public QLabel {
  Q_OBJECT
 public:
  explicit RunLegend(QWidget* parent = nullptr);
  // runs: the runs the charts show, in their order (colours follow it).
  void showRuns(const std::vector<plab::RunRecord>& runs);
  // While the loss chart shows loss minus fp32: each entry names the fp32
  // twin the run is drawn against ("bf16 − fp32"), or that none is shown.
  void setDifferenceFromFp32(bool on) { difference_ = on; }
  int entryCount() const { return entries_; }

 private:
  int entries_ = 0;
  bool difference_ = false;
};

}  // namespace plab::ui
