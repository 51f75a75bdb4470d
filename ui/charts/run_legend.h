#pragma once
// One legend for all the live charts, above them: a sample of each drawn
// series' line (its colour; a later run of a colour dashed, dotted...; a
// group's band) and its name, for every series that has measured something
// (queued runs and runs that failed before their first step are left out).
// The charts then need no legends of their own over or under their plots.
// At most two lines of whole names: what does not fit is "+N more (see the
// table)" — the runs table is the full legend — and the tooltip lists all.
#include <QLabel>
#include <vector>

#include "charts/chart_series.h"
#include "report/run_report.h"

namespace plab::ui {

class RunLegend : public QLabel {
  Q_OBJECT
 public:
  static constexpr int kMaxLines = 2;
  explicit RunLegend(QWidget* parent = nullptr);
  void showSeries(const std::vector<ChartSeries>& series);
  void showRuns(const std::vector<plab::RunRecord>& runs) { showSeries(seriesOfRuns(runs)); }
  // While the loss chart shows loss minus fp32: each entry names the fp32
  // twin the run is drawn against ("bf16 − fp32"), or that none is shown.
  void setDifferenceFromFp32(bool on) { difference_ = on; }
  int entryCount() const { return static_cast<int>(entries_.size()); }  // runs listed (shown or under "+N more")
  int shownEntryCount() const { return shown_; }                        // on the (at most two) lines
  int lineCount() const { return lines_; }

  QSize minimumSizeHint() const override;
  QSize sizeHint() const override;

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  struct Entry {
    QString html;  // the sample image and the name
    int width = 0; // in pixels
  };
  void layOut();
  std::vector<Entry> entries_;
  int shown_ = 0;
  int lines_ = 0;
  bool difference_ = false;
};

}  // namespace plab::ui
