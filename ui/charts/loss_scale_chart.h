#pragma once
// fp16-mixed's dynamic loss scale per step (log2 axis: GradScaler's scale
// moves in powers of two), with the steps it skipped (Inf/NaN in the fp16
// gradients) marked by crosses on the curve. Runs without a loss scale (every
// other mode) draw nothing; the panel hides the chart while no shown run has one.
#include <vector>

#include "charts/run_chart.h"

namespace plab::ui {

class LossScaleChart : public RunChart {
  Q_OBJECT
 public:
  explicit LossScaleChart(QWidget* parent = nullptr);
  // A group's runs are drawn one by one (a scale is a step function: a mean
  // of scales is no scale), in the group's style.
  void showSeries(const std::vector<ChartSeries>& series) override;
  // Whether any of the runs recorded a loss scale (the panel shows the chart then).
  static bool anyRunScalesLoss(const std::vector<plab::RunRecord>& runs);
  static bool anyRunScalesLoss(const std::vector<ChartSeries>& series);
  QCPGraph* scaleGraph(int run) const;
  QCPGraph* skippedGraph(int run) const;

 protected:
  void fitView() override;  // half a power of two of room: a flat scale lies on no axis line

 private:
  std::vector<QCPGraph*> scale_, skipped_;
  std::vector<size_t> stepsShown_;
};

}  // namespace plab::ui
