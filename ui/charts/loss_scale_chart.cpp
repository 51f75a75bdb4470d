#include "charts/loss_scale_chart.h"

#include <algorithm>
#include <cmath>

#include "charts/run_colors.h"

namespace plab::ui {

LossScaleChart::LossScaleChart(QWidget* parent) : RunChart("Loss scale (fp16-mixed)", parent) {
  setObjectName("lossScaleChart");
  setExplanation("the factor the loss is multiplied by before backward (torch.amp.GradScaler's rule);\n"
                 "x: a step skipped because its fp16 gradients held Inf/NaN (the scale halves)");
  xAxis->setLabel("step");
  yAxis->setLabel("loss scale (log2)");
  // The scale is a power of two (init 2^16, x2 / x0.5): log2 of it reads as whole numbers.
  placeLegendBelow();
}

bool LossScaleChart::anyRunScalesLoss(const std::vector<plab::RunRecord>& runs) {
  return std::any_of(runs.begin(), runs.end(), [](const plab::RunRecord& r) {
    return std::any_of(r.steps.begin(), r.steps.end(), [](const plab::StepMetrics& m) { return m.lossScale.has_value(); });
  });
}

bool LossScaleChart::anyRunScalesLoss(const std::vector<ChartSeries>& series) {
  for (const ChartSeries& s : series)
    for (const plab::RunRecord* r : s.runs)
      if (std::any_of(r->steps.begin(), r->steps.end(), [](const plab::StepMetrics& m) { return m.lossScale.has_value(); }))
        return true;
  return false;
}

void LossScaleChart::showSeries(const std::vector<ChartSeries>& series) {
  std::vector<const plab::RunRecord*> runsOf;
  std::vector<plab::RunStyle> styles;
  std::vector<QString> labels;
  for (const ChartSeries& s : series)
    for (size_t k = 0; k < s.runs.size(); ++k) {
      runsOf.push_back(s.runs[k]);
      styles.push_back(s.style);
      labels.push_back(s.group() ? QString("%1 #%2").arg(s.label).arg(k + 1) : s.label);
    }
  if (runsOf.size() < scale_.size()) {  // the list changed: start over
    clearGraphs();
    scale_.clear();
    skipped_.clear();
    stepsShown_.clear();
  }
  for (size_t i = 0; i < runsOf.size(); ++i) {
    if (i >= scale_.size()) {
      scale_.push_back(addGraph());
      skipped_.push_back(addGraph());
      skipped_.back()->setLineStyle(QCPGraph::lsNone);
      skipped_.back()->removeFromLegend();
      stepsShown_.push_back(0);
    }
    QCPGraph* g = scale_[i];
    QCPGraph* x = skipped_[i];
    g->setPen(runPen(styles[i], 1.6));
    g->setLineStyle(QCPGraph::lsStepLeft);  // the scale holds until it changes
    g->setName(labels[i]);
    x->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross, QColor(200, 30, 30), 9));
    x->setName(labels[i] + " skipped");
    const auto& run = *runsOf[i];
    if (run.steps.size() < stepsShown_[i]) {
      g->data()->clear();
      x->data()->clear();
      stepsShown_[i] = 0;
    }
    for (size_t s = stepsShown_[i]; s < run.steps.size(); ++s) {
      const plab::StepMetrics& m = run.steps[s];
      if (!m.lossScale || !(*m.lossScale > 0)) continue;
      const double key = keyOf(run, m);
      const double log2Scale = std::log2(*m.lossScale);
      g->addData(key, log2Scale);
      if (m.stepSkipped.value_or(false)) x->addData(key, log2Scale);
    }
    stepsShown_[i] = run.steps.size();
  }
  for (QCPGraph* g : scale_) {
    if (g->dataCount() > 0) g->addToLegend();
    else g->removeFromLegend();
  }
  showLegendIfAny();
  scheduleReplot();
}

void LossScaleChart::fitView() {
  rescaleAxes();
  yAxis->setRange(yAxis->range().lower - 0.5, yAxis->range().upper + 0.5);
}

QCPGraph* LossScaleChart::scaleGraph(int run) const {
  return run >= 0 && run < static_cast<int>(scale_.size()) ? scale_[static_cast<size_t>(run)] : nullptr;
}

QCPGraph* LossScaleChart::skippedGraph(int run) const {
  return run >= 0 && run < static_cast<int>(skipped_.size()) ? skipped_[static_cast<size_t>(run)] : nullptr;
}

}  // namespace plab::ui
