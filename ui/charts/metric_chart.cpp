#include "charts/metric_chart.h"

#include "charts/run_colors.h"

namespace plab::ui {

MetricChart::MetricChart(const QString& title, Picker pick, bool markers, QWidget* parent)
    : RunChart(title, parent), pick_(pick), markers_(markers) {
  xAxis->setLabel("step");
  placeLegendBelow();
}

void MetricChart::showSeries(const std::vector<ChartSeries>& series) {
  if (series.size() < graphs_.size()) {  // the list changed: start over
    clearGraphs();
    graphs_.clear();
  }
  for (size_t i = 0; i < series.size(); ++i) {
    const ChartSeries& s = series[i];
    if (i >= graphs_.size()) {
      SeriesGraphs g;
      g.low = addGraph();
      g.high = addGraph();
      g.line = addGraph();
      g.low->removeFromLegend();
      g.high->removeFromLegend();
      graphs_.push_back(g);
    }
    SeriesGraphs& g = graphs_[i];
    // The series' colour; a later run of that colour its own dash and marker.
    g.line->setPen(runPen(s.style, s.group() ? 2.0 : 1.6));
    const QColor color = toQColor(s.style.color);
    if (markers_) g.line->setScatterStyle(QCPScatterStyle(runMarker(s.style.repeat), color, color, 6));
    g.line->setName(s.label);
    QColor band = color;
    band.setAlpha(45);
    g.low->setPen(Qt::NoPen);
    g.high->setPen(Qt::NoPen);
    g.high->setBrush(band);
    g.high->setChannelFillGraph(s.group() ? g.low : nullptr);
    g.low->setVisible(s.group());
    g.high->setVisible(s.group());
    if (s.group()) {
      if (g.groupVersion == s.version() && g.line->dataCount() > 0) continue;
      g.groupVersion = s.version();
      g.line->data()->clear();
      g.low->data()->clear();
      g.high->data()->clear();
      std::vector<std::map<int64_t, double>> values;
      for (const plab::RunRecord* run : s.runs) {
        std::map<int64_t, double> v;
        for (const plab::StepMetrics& m : run->steps)
          if (const auto x = pick_(m)) v[m.step] = 100.0 * *x;
        values.push_back(std::move(v));
      }
      const GroupCurve curve = meanAndRange(values);
      for (size_t k = 0; k < curve.steps.size(); ++k) {
        const double key = keyOfStep(s.first(), static_cast<int64_t>(curve.steps[k]));
        g.line->addData(key, curve.mean[k]);
        g.low->addData(key, curve.low[k]);
        g.high->addData(key, curve.high[k]);
      }
      g.stepsShown = 0;
      continue;
    }
    g.groupVersion = 0;
    const plab::RunRecord& run = s.first();
    if (run.steps.size() < g.stepsShown) {
      g.line->data()->clear();
      g.stepsShown = 0;
    }
    for (size_t k = g.stepsShown; k < run.steps.size(); ++k)
      if (const auto v = pick_(run.steps[k])) g.line->addData(keyOf(run, run.steps[k]), 100.0 * *v);
    g.stepsShown = run.steps.size();
  }
  // Only series with something drawn appear in the legend (not queued runs).
  for (const SeriesGraphs& g : graphs_) {
    if (g.line->dataCount() > 0) g.line->addToLegend();
    else g.line->removeFromLegend();
  }
  showLegendIfAny();
  scheduleReplot();
}

QCPGraph* MetricChart::runGraph(int series) const {
  return series >= 0 && series < static_cast<int>(graphs_.size()) ? graphs_[static_cast<size_t>(series)].line : nullptr;
}

QCPGraph* MetricChart::bandGraph(int series) const {
  if (series < 0 || series >= static_cast<int>(graphs_.size())) return nullptr;
  const SeriesGraphs& g = graphs_[static_cast<size_t>(series)];
  return g.high->visible() ? g.high : nullptr;
}

}  // namespace plab::ui
