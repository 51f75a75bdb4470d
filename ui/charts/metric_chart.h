#pragma once
// One curve per series of a per-step metric (in percent), e.g. the share of
// updates rounded away or the windowed update lost. Steps where the metric
// is absent (a window still open) are skipped. A group series draws the
// mean of its runs with a band over their range.
#include <optional>
#include <vector>

#include "charts/run_chart.h"

namespace plab::ui {

class MetricChart : public RunChart {
  Q_OBJECT
 public:
  using Picker = std::optional<double> (*)(const plab::StepMetrics&);  // fraction, shown x100
  MetricChart(const QString& title, Picker pick, bool markers, QWidget* parent = nullptr);
  void showSeries(const std::vector<ChartSeries>& series) override;
  QCPGraph* runGraph(int series) const;
  QCPGraph* bandGraph(int series) const;  // a group's range; else nullptr

 private:
  struct SeriesGraphs {
    QCPGraph* line = nullptr;
    QCPGraph* low = nullptr;
    QCPGraph* high = nullptr;
    size_t stepsShown = 0;
    uint64_t groupVersion = 0;  // of the group drawn: unchanged, not drawn again
  };
  Picker pick_;
  bool markers_;
  std::vector<SeriesGraphs> graphs_;
};

}  // namespace plab::ui
