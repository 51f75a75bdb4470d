#pragma once
// One curve per run of a per-step metric (in percent), e.g. the share of
// updates rounded away or the windowed update lost. Steps where the metric
// is absent (a window still open) are skipped.
#include <optional>
#include <vector>

#include "charts/run_chart.h"

namespace plab::ui {

class MetricChart : public RunChart {
  Q_OBJECT
 public:
  using Picker = std::optional<double> (*)(const plab::StepMetrics&);  // fraction, shown x100
  MetricChart(const QString& title, Picker pick, bool markers, QWidget* parent = nullptr);
  void showRuns(const std::vector<plab::RunRecord>& runs) override;
  QCPGraph* runGraph(int run) const;

 private:
  Picker pick_;
  bool markers_;
  std::vector<QCPGraph*> graphs_;
  std::vector<size_t> stepsShown_;
};

}  // namespace plab::ui
