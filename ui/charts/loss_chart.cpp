#include "charts/loss_chart.h"

#include "charts/run_colors.h"
#include "report/fp32_comparison.h"

namespace plab::ui {

LossChart::LossChart(QWidget* parent) : RunChart("Loss", parent) {
  setObjectName("lossChart");
  xAxis->setLabel("step");
  yAxis->setLabel("loss (solid: train, dashed: val)");
}

void LossChart::setDifferenceFromFp32(bool on) {
  if (on == difference_) return;
  difference_ = on;
  if (on) setLogScale(false);  // differences go negative
  titleElement_->setText(on ? "Loss minus fp32's at the same step" : title());
  yAxis->setLabel(on ? "Δ loss vs fp32 (nats; solid: train, dashed: val)" : "loss (solid: train, dashed: val)");
  for (RunGraphs& g : graphs_) {
    if (g.train) g.train->data()->clear();
    if (g.val) g.val->data()->clear();
    g.stepsShown = 0;
  }
}

void LossChart::showDifferences(const std::vector<plab::RunRecord>& runs) {
  for (size_t i = 0; i < runs.size(); ++i) {
    RunGraphs& g = graphs_[i];
    g.train->data()->clear();
    g.val->data()->clear();
    g.stepsShown = 0;
    const auto ref = plab::report::fp32ReferenceIndex(runs, i);
    if (!ref) continue;
    const plab::report::LossDifference d = plab::report::lossDifference(runs[i], runs[*ref]);
    g.train->setData(QVector<double>(d.steps.begin(), d.steps.end()), QVector<double>(d.train.begin(), d.train.end()),
                     true);
    g.val->setData(QVector<double>(d.valSteps.begin(), d.valSteps.end()), QVector<double>(d.val.begin(), d.val.end()),
                   true);
  }
}

void LossChart::showRuns(const std::vector<plab::RunRecord>& runs) {
  if (runs.size() < graphs_.size()) {  // the session was cleared: start over
    clearGraphs();
    graphs_.clear();
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& run = runs[i];
    if (i >= graphs_.size()) graphs_.push_back({});
    RunGraphs& g = graphs_[i];
    if (!g.train) {
      const QColor color = runColor(static_cast<int>(i));
      g.train = addGraph();
      g.train->setName(runLabel(run, static_cast<int>(i)));
      g.train->setPen(QPen(color, 1.6));
      g.val = addGraph();
      g.val->setName(runLabel(run, static_cast<int>(i)) + " (val)");
      g.val->setPen(QPen(color, 1.4, Qt::DashLine));
      g.val->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, color, color, 5));
    }
    g.train->setName(runLabel(run, static_cast<int>(i)));
    g.val->setName(runLabel(run, static_cast<int>(i)) + " (val)");
    // One legend entry per run keeps the legend off the curves; the axis
    // label explains the dashed validation curves.
    g.val->removeFromLegend();
    if (difference_) continue;
    if (run.steps.size() < g.stepsShown) {
      g.train->data()->clear();
      g.val->data()->clear();
      g.stepsShown = 0;
    }
    for (size_t s = g.stepsShown; s < run.steps.size(); ++s) {
      const auto& m = run.steps[s];
      g.train->addData(static_cast<double>(m.step), m.loss);
      if (m.valLoss) g.val->addData(static_cast<double>(m.step), *m.valLoss);
    }
    g.stepsShown = run.steps.size();
  }
  if (difference_) showDifferences(runs);
  legend->setVisible(graphCount() > 0);  // an empty legend is just a stray box
  scheduleReplot();
}

void LossChart::setLogScale(bool on) {
  if (on) {
    yAxis->setScaleType(QCPAxis::stLogarithmic);
    yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
  } else {
    yAxis->setScaleType(QCPAxis::stLinear);
    yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
  }
  resetView();
}

bool LossChart::logScale() const { return yAxis->scaleType() == QCPAxis::stLogarithmic; }

QCPGraph* LossChart::trainGraph(int run) const {
  return run >= 0 && run < static_cast<int>(graphs_.size()) ? graphs_[static_cast<size_t>(run)].train : nullptr;
}

QCPGraph* LossChart::valGraph(int run) const {
  return run >= 0 && run < static_cast<int>(graphs_.size()) ? graphs_[static_cast<size_t>(run)].val : nullptr;
}

}  // namespace plab::ui
