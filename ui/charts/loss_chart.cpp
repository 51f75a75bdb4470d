#include "charts/loss_chart.h"

#include <algorithm>

#include "charts/run_colors.h"
#include "report/fp32_comparison.h"

namespace plab::ui {
namespace {

const char* const kLossLabel = "loss (line: train, marks: val)";

void clearGraph(QCPGraph* g) {
  if (g) g->data()->clear();
}

}  // namespace

LossChart::LossChart(QWidget* parent) : RunChart("Loss", parent) {
  setObjectName("lossChart");
  xAxis->setLabel("step");
  yAxis->setLabel(kLossLabel);
  placeLegendBelow();
}

void LossChart::clearData() {
  for (SeriesGraphs& g : graphs_) {
    for (QCPGraph* graph : {g.train, g.raw, g.val, g.low, g.high}) clearGraph(graph);
    g.stepsShown = 0;
    g.groupVersion = 0;
    g.ema = Ema(smoothing_);
  }
}

void LossChart::setDifferenceFromFp32(bool on) {
  if (on == difference_) return;
  difference_ = on;
  if (on) setLogScale(false);  // differences go negative
  // The reference is the run's fp32 twin unless one was chosen by hand; the
  // legend names it per run ("(chosen)").
  titleElement_->setText(on ? "Loss minus its fp32 reference" : title());
  yAxis->setLabel(on ? "Δ loss, same step (line: train, marks: val)" : kLossLabel);
  clearData();
}

void LossChart::setSmoothing(double weight) {
  weight = std::clamp(weight, 0.0, 0.99);
  if (weight == smoothing_) return;
  smoothing_ = weight;
  clearData();
}

void LossChart::styleSeries(SeriesGraphs& g, const QString& label, const plab::RunStyle& style, bool group) {
  if (!g.train) {
    // The band and the faint raw curve first, so the line is drawn over them.
    g.low = addGraph();
    g.high = addGraph();
    g.raw = addGraph();
    g.train = addGraph();
    g.val = addGraph();
    // One legend entry per series keeps the legend short; the axis label
    // explains the marked validation curves.
    for (QCPGraph* other : {g.low, g.high, g.raw, g.val}) other->removeFromLegend();
    g.ema = Ema(smoothing_);
  }
  g.train->setName(label);
  g.raw->setName(label + " (raw)");
  g.val->setName(label + " (val)");
  g.high->setName(label + " (range)");
  // A later run of a colour: that colour in a dash pattern of its own, on
  // the train and the validation curve alike; validation is told from train
  // by its marks (the run's marker), not by a dash.
  const QColor color = toQColor(style.color);
  g.train->setPen(runPen(style, group ? 2.0 : 1.6));
  QColor faint = color;
  faint.setAlpha(60);
  g.raw->setPen(QPen(faint, 1.0));  // solid: a dashed jagged curve reads as noise
  g.raw->setVisible(smoothing_ > 0 && !group);
  g.val->setPen(runPen(style, 1.0));
  g.val->setScatterStyle(QCPScatterStyle(runMarker(style.repeat), color, color, 6));
  // A group's range: the band between its lowest and highest run.
  QColor band = color;
  band.setAlpha(45);
  g.low->setPen(Qt::NoPen);
  g.high->setPen(Qt::NoPen);
  g.high->setBrush(band);
  g.high->setChannelFillGraph(group ? g.low : nullptr);
  g.low->setVisible(group);
  g.high->setVisible(group);
}

void LossChart::showRunDifference(SeriesGraphs& g, const ChartSeries& s) {
  for (QCPGraph* graph : {g.train, g.raw, g.val, g.low, g.high}) clearGraph(graph);
  g.stepsShown = 0;
  const plab::RunRecord& run = s.first();
  const plab::RunRecord* ref = s.twins.front();
  if (!ref) return;
  const plab::report::LossDifference d = plab::report::lossDifference(run, *ref);
  Ema ema(smoothing_);
  for (size_t k = 0; k < d.steps.size(); ++k) {
    const double key = keyOfStep(run, static_cast<int64_t>(d.steps[k]));
    g.raw->addData(key, d.train[k]);
    g.train->addData(key, ema.next(d.train[k]));
  }
  for (size_t k = 0; k < d.valSteps.size(); ++k) g.val->addData(keyOfStep(run, static_cast<int64_t>(d.valSteps[k])), d.val[k]);
}

void LossChart::showGroup(SeriesGraphs& g, const ChartSeries& s) {
  // A thousand runs drawn as groups: only a group whose runs changed is computed again.
  if (g.groupVersion == s.version() && g.train->dataCount() > 0) return;
  g.groupVersion = s.version();
  for (QCPGraph* graph : {g.train, g.raw, g.val, g.low, g.high}) clearGraph(graph);
  // Each run smoothed alone, then the mean and range over the runs (in the
  // difference view: of each run minus its own reference).
  std::vector<std::map<int64_t, double>> train, val;
  for (size_t k = 0; k < s.runs.size(); ++k) {
    std::map<int64_t, double> t, v;
    Ema ema(smoothing_);
    if (difference_) {
      if (!s.twins[k]) continue;  // a run without a reference adds nothing to the difference
      const plab::report::LossDifference d = plab::report::lossDifference(*s.runs[k], *s.twins[k]);
      for (size_t i = 0; i < d.steps.size(); ++i) t[static_cast<int64_t>(d.steps[i])] = ema.next(d.train[i]);
      for (size_t i = 0; i < d.valSteps.size(); ++i) v[static_cast<int64_t>(d.valSteps[i])] = d.val[i];
    } else {
      for (const plab::StepMetrics& m : s.runs[k]->steps) {
        t[m.step] = ema.next(m.loss);
        if (m.valLoss) v[m.step] = *m.valLoss;
      }
    }
    train.push_back(std::move(t));
    val.push_back(std::move(v));
  }
  const GroupCurve curve = meanAndRange(train);
  for (size_t i = 0; i < curve.steps.size(); ++i) {
    const double key = keyOfStep(s.first(), static_cast<int64_t>(curve.steps[i]));
    g.train->addData(key, curve.mean[i]);
    g.low->addData(key, curve.low[i]);
    g.high->addData(key, curve.high[i]);
  }
  const GroupCurve valCurve = meanAndRange(val);
  for (size_t i = 0; i < valCurve.steps.size(); ++i)
    g.val->addData(keyOfStep(s.first(), static_cast<int64_t>(valCurve.steps[i])), valCurve.mean[i]);
  g.stepsShown = 0;
}

std::vector<QString> LossChart::differenceLabels(const std::vector<ChartSeries>& series) {
  std::vector<QString> labels;
  for (const ChartSeries& s : series) {
    QString label = s.label;
    if (s.group()) {
      const auto withTwin = std::count_if(s.twins.begin(), s.twins.end(), [](const auto* t) { return t != nullptr; });
      label += withTwin == 0 ? QString(": no fp32 twins")
                             : QString(" − their fp32 twins (%1 of %2 runs)").arg(withTwin).arg(s.runs.size());
    } else if (!s.twins.front()) {
      label += ": no fp32 twin";
    } else if (s.twins.front() == s.runs.front()) {
      label += " (fp32 itself)";
    } else {
      label += " − " + s.twinLabels.front() + (s.twinsChosen.front() ? " (chosen)" : "");
    }
    labels.push_back(label);
  }
  return labels;
}

void LossChart::showSeries(const std::vector<ChartSeries>& series) {
  if (series.size() < graphs_.size()) {  // the list changed: start over
    clearGraphs();
    graphs_.clear();
  }
  std::vector<QString> labels;
  if (difference_) labels = differenceLabels(series);
  else
    for (const ChartSeries& s : series) labels.push_back(s.label);
  for (size_t i = 0; i < series.size(); ++i) {
    const ChartSeries& s = series[i];
    if (i >= graphs_.size()) graphs_.push_back({});
    SeriesGraphs& g = graphs_[i];
    styleSeries(g, labels[i], s.style, s.group());
    if (s.group()) {
      showGroup(g, s);
      continue;
    }
    if (difference_) {
      showRunDifference(g, s);
      continue;
    }
    const plab::RunRecord& run = s.first();
    if (run.steps.size() < g.stepsShown) {
      for (QCPGraph* graph : {g.train, g.raw, g.val}) clearGraph(graph);
      g.stepsShown = 0;
      g.ema = Ema(smoothing_);
    }
    // Live updates only add the new steps.
    for (size_t k = g.stepsShown; k < run.steps.size(); ++k) {
      const auto& m = run.steps[k];
      const double key = keyOf(run, m);
      g.raw->addData(key, m.loss);
      g.train->addData(key, g.ema.next(m.loss));
      if (m.valLoss) g.val->addData(key, *m.valLoss);
    }
    g.stepsShown = run.steps.size();
  }
  // Only series with something drawn appear in the legend (not queued runs),
  // and in the difference view those without an fp32 twin, saying so.
  for (size_t i = 0; i < graphs_.size(); ++i) {
    SeriesGraphs& g = graphs_[i];
    const bool drawn = g.train->dataCount() > 0 || g.val->dataCount() > 0;
    const bool twinless = difference_ && i < series.size() && !series[i].first().steps.empty() &&
                          std::none_of(series[i].twins.begin(), series[i].twins.end(), [](const auto* t) { return t; });
    if (drawn || twinless) g.train->addToLegend();
    else g.train->removeFromLegend();
  }
  showLegendIfAny();
  scheduleReplot();
}

void LossChart::setLogScale(bool on) { setLogY(on); }

bool LossChart::logScale() const { return logY(); }

QCPGraph* LossChart::trainGraph(int series) const {
  return series >= 0 && series < static_cast<int>(graphs_.size()) ? graphs_[static_cast<size_t>(series)].train : nullptr;
}

QCPGraph* LossChart::rawGraph(int series) const {
  return series >= 0 && series < static_cast<int>(graphs_.size()) ? graphs_[static_cast<size_t>(series)].raw : nullptr;
}

QCPGraph* LossChart::valGraph(int series) const {
  return series >= 0 && series < static_cast<int>(graphs_.size()) ? graphs_[static_cast<size_t>(series)].val : nullptr;
}

QCPGraph* LossChart::bandGraph(int series) const {
  if (series < 0 || series >= static_cast<int>(graphs_.size())) return nullptr;
  const SeriesGraphs& g = graphs_[static_cast<size_t>(series)];
  return g.high && g.high->visible() ? g.high : nullptr;
}

}  // namespace plab::ui
