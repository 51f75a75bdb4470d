#include "charts/loss_chart.h"

#include "charts/run_colors.h"

namespace plab::ui {

LossChart::LossChart(QWidget* parent) : RunChart("Loss", parent) {
  setObjectName("lossChart");
  xAxis->setLabel("step");
  yAxis->setLabel("loss (solid: train, dashed: val)");
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
    // One legend entry per run keeps the legend off the curves; the axis
    // label explains the dashed validation curves.
    g.val->removeFromLegend();
  }
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
