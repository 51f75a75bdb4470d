#pragma once
// Fraction of intended non-zero updates that bf16 rounding threw away, per
// step, one curve per run (in percent).
#include <vector>

#include "charts/run_chart.h"

namespace plab::ui {

class RoundedAwayChart : public RunChart {
  Q_OBJECT
 public:
  explicit RoundedAwayChart(QWidget* parent = nullptr);
  void showRuns(const std::vector<plab::RunRecord>& runs) override;
  QCPGraph* runGraph(int run) const;

 private:
  std::vector<QCPGraph*> graphs_;
  std::vector<size_t> stepsShown_;
};

}  // namespace plab::ui
