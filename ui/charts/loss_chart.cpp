#include "charts/loss_chart.h"

#include <algorithm>

#include "charts/run_colors.h"
#include "report/fp32_comparison.h"

namespace plab::ui {
namespace {

const char* const kLossLabel = "loss (line: train, marks: val)";

}  // namespace

LossChart::LossChart(QWidget* parent) : RunChart("Loss", parent) {
  setObjectName("lossChart");
  xAxis->setLabel("step");
  yAxis->setLabel(kLossLabel);
  placeLegendBelow();
}

void LossChart::clearData() {
  for (RunGraphs& g : graphs_) {
    if (g.train) g.train->data()->clear();
    if (g.raw) g.raw->data()->clear();
    if (g.val) g.val->data()->clear();
    g.stepsShown = 0;
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

void LossChart::styleRun(RunGraphs& g, const QString& label, const plab::RunStyle& style) {
  if (!g.train) {
    // The faint raw curve first, so the smoothed one is drawn over it.
    g.raw = addGraph();
    g.train = addGraph();
    g.val = addGraph();
    // One legend entry per run keeps the legend short; the axis label
    // explains the marked validation curves.
    g.raw->removeFromLegend();
    g.val->removeFromLegend();
    g.ema = Ema(smoothing_);
  }
  g.train->setName(label);
  g.raw->setName(label + " (raw)");
  g.val->setName(label + " (val)");
  // A later run of a mode: its mode's colour in a dash pattern of its own,
  // on the train and the validation curve alike; validation is told from
  // train by its marks (the run's marker), not by a dash.
  const QColor color = toQColor(style.color);
  g.train->setPen(runPen(style, 1.6));
  QColor faint = color;
  faint.setAlpha(60);
  g.raw->setPen(QPen(faint, 1.0));  // solid: a dashed jagged curve reads as noise
  g.raw->setVisible(smoothing_ > 0);
  g.val->setPen(runPen(style, 1.0));
  g.val->setScatterStyle(QCPScatterStyle(runMarker(style.repeat), color, color, 6));
}

void LossChart::showDifferences(const std::vector<plab::RunRecord>& runs) {
  for (size_t i = 0; i < runs.size(); ++i) {
    RunGraphs& g = graphs_[i];
    g.train->data()->clear();
    g.raw->data()->clear();
    g.val->data()->clear();
    g.stepsShown = 0;
    const auto ref = plab::report::fp32TwinIndex(runs, i);
    if (!ref) continue;
    const plab::report::LossDifference d = plab::report::lossDifference(runs[i], runs[*ref]);
    Ema ema(smoothing_);
    for (size_t s = 0; s < d.steps.size(); ++s) {
      const double key = keyOfStep(runs[i], static_cast<int64_t>(d.steps[s]));
      g.raw->addData(key, d.train[s]);
      g.train->addData(key, ema.next(d.train[s]));
    }
    for (size_t s = 0; s < d.valSteps.size(); ++s)
      g.val->addData(keyOfStep(runs[i], static_cast<int64_t>(d.valSteps[s])), d.val[s]);
  }
}

std::vector<QString> LossChart::differenceLabels(const std::vector<plab::RunRecord>& runs) {
  const std::vector<QString> names = legendLabels(runs);
  std::vector<QString> labels = names;
  const auto twins = plab::report::fp32TwinIndices(runs);
  for (size_t i = 0; i < runs.size(); ++i) {
    if (!twins[i]) labels[i] += ": no fp32 twin shown";
    else if (*twins[i] == i) labels[i] += " (fp32 itself)";
    else labels[i] += " − " + names[*twins[i]] + (runs[i].fp32Reference.empty() ? "" : " (chosen)");
  }
  return labels;
}

void LossChart::showRuns(const std::vector<plab::RunRecord>& runs) {
  if (runs.size() < graphs_.size()) {  // the session was cleared: start over
    clearGraphs();
    graphs_.clear();
  }
  const std::vector<plab::RunStyle> styles = plab::runStyles(runs);
  const std::vector<QString> labels = difference_ ? differenceLabels(runs) : legendLabels(runs);
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& run = runs[i];
    if (i >= graphs_.size()) graphs_.push_back({});
    RunGraphs& g = graphs_[i];
    styleRun(g, labels[i], styles[i]);
    if (difference_) continue;
    if (run.steps.size() < g.stepsShown) {
      g.train->data()->clear();
      g.raw->data()->clear();
      g.val->data()->clear();
      g.stepsShown = 0;
      g.ema = Ema(smoothing_);
    }
    for (size_t s = g.stepsShown; s < run.steps.size(); ++s) {
      const auto& m = run.steps[s];
      const double key = keyOf(run, m);
      g.raw->addData(key, m.loss);
      g.train->addData(key, g.ema.next(m.loss));
      if (m.valLoss) g.val->addData(key, *m.valLoss);
    }
    g.stepsShown = run.steps.size();
  }
  if (difference_) showDifferences(runs);
  // Only runs with something drawn appear in the legend (not queued ones),
  // and in the difference view the runs that have no fp32 twin, saying so.
  for (size_t i = 0; i < graphs_.size(); ++i) {
    RunGraphs& g = graphs_[i];
    const bool drawn = g.train->dataCount() > 0 || g.val->dataCount() > 0;
    const bool twinless = difference_ && i < runs.size() && !runs[i].steps.empty() &&
                          !plab::report::fp32TwinIndex(runs, i);
    if (drawn || twinless) g.train->addToLegend();
    else g.train->removeFromLegend();
  }
  showLegendIfAny();
  scheduleReplot();
}

void LossChart::setLogScale(bool on) { setLogY(on); }

bool LossChart::logScale() const { return logY(); }

QCPGraph* LossChart::trainGraph(int run) const {
  return run >= 0 && run < static_cast<int>(graphs_.size()) ? graphs_[static_cast<size_t>(run)].train : nullptr;
}

QCPGraph* LossChart::rawGraph(int run) const {
  return run >= 0 && run < static_cast<int>(graphs_.size()) ? graphs_[static_cast<size_t>(run)].raw : nullptr;
}

QCPGraph* LossChart::valGraph(int run) const {
  return run >= 0 && run < static_cast<int>(graphs_.size()) ? graphs_[static_cast<size_t>(run)].val : nullptr;
}

}  // namespace plab::ui
