#include "charts/metric_chart.h"

#include "charts/run_colors.h"

namespace plab::ui {

MetricChart::MetricChart(const QString& title, Picker pick, bool markers, QWidget* parent)
    : RunChart(title, parent), pick_(pick), markers_(markers) {
  xAxis->setLabel("step");
  placeLegendBelow();
}

void MetricChart::showRuns(const std::vector<plab::RunRecord>& runs) {
  if (runs.size() < graphs_.size()) {  // the session was cleared: start over
    clearGraphs();
    graphs_.clear();
    stepsShown_.clear();
  }
  const std::vector<plab::RunStyle> styles = plab::runStyles(runs);
  const std::vector<QString> labels = legendLabels(runs);
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& run = runs[i];
    if (i >= graphs_.size()) {
      graphs_.push_back(addGraph());
      stepsShown_.push_back(0);
    }
    QCPGraph* g = graphs_[i];
    // The mode's colour; a later run of the mode its own dash and marker.
    g->setPen(runPen(styles[i], 1.6));
    const QColor color = toQColor(styles[i].color);
    if (markers_) g->setScatterStyle(QCPScatterStyle(runMarker(styles[i].repeat), color, color, 6));
    g->setName(labels[i]);
    if (run.steps.size() < stepsShown_[i]) {
      g->data()->clear();
      stepsShown_[i] = 0;
    }
    for (size_t s = stepsShown_[i]; s < run.steps.size(); ++s)
      if (const auto v = pick_(run.steps[s])) g->addData(keyOf(run, run.steps[s]), 100.0 * *v);
    stepsShown_[i] = run.steps.size();
  }
  // Only runs with something drawn appear in the legend (not queued ones).
  for (QCPGraph* g : graphs_) {
    if (g->dataCount() > 0) g->addToLegend();
    else g->removeFromLegend();
  }
  showLegendIfAny();
  scheduleReplot();
}

QCPGraph* MetricChart::runGraph(int run) const {
  return run >= 0 && run < static_cast<int>(graphs_.size()) ? graphs_[static_cast<size_t>(run)] : nullptr;
}

}  // namespace plab::ui
