#pragma once
// Train loss (solid) and validation loss (dashed, dots) per run vs step,
// with an optional logarithmic y axis, or each run's loss minus the loss of
// the fp32 run on the same model, data and seed at the same step.
#include <vector>

#include "charts/run_chart.h"

namespace plab::ui {

class LossChart : public RunChart {
  Q_OBJECT
 public:
  explicit LossChart(QWidget* parent = nullptr);
  void showRuns(const std::vector<plab::RunRecord>& runs) override;

  void setLogScale(bool on);
  bool logScale() const;
  // Shows loss - fp32 loss (report/fp32_comparison.h); redraw with showRuns.
  void setDifferenceFromFp32(bool on);
  bool differenceFromFp32() const { return difference_; }
  QCPGraph* trainGraph(int run) const;  // nullptr if the run has none yet
  QCPGraph* valGraph(int run) const;

 private:
  struct RunGraphs {
    QCPGraph* train = nullptr;
    QCPGraph* val = nullptr;
    size_t stepsShown = 0;
  };
  void showDifferences(const std::vector<plab::RunRecord>& runs);
  std::vector<RunGraphs> graphs_;
  bool difference_ = false;
};

}  // namespace plab::ui
