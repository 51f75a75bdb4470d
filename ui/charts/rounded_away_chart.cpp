#include "charts/rounded_away_chart.h"

#include "charts/run_colors.h"

namespace plab::ui {

RoundedAwayChart::RoundedAwayChart(QWidget* parent) : RunChart("Updates rounded away", parent) {
  setObjectName("roundedAwayChart");
  xAxis->setLabel("step");
  yAxis->setLabel("rounded away (% of non-zero updates)");
}

void RoundedAwayChart::showRuns(const std::vector<plab::RunRecord>& runs) {
  if (runs.size() < graphs_.size()) {
    clearGraphs();
    graphs_.clear();
    stepsShown_.clear();
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& run = runs[i];
    if (i >= graphs_.size()) {
      QCPGraph* g = addGraph();
      g->setPen(QPen(runColor(static_cast<int>(i)), 1.6));
      graphs_.push_back(g);
      stepsShown_.push_back(0);
    }
    QCPGraph* g = graphs_[i];
    g->setName(runLabel(run, static_cast<int>(i)));
    if (run.steps.size() < stepsShown_[i]) {
      g->data()->clear();
      stepsShown_[i] = 0;
    }
    for (size_t s = stepsShown_[i]; s < run.steps.size(); ++s)
      g->addData(static_cast<double>(run.steps[s].step), 100.0 * run.steps[s].roundedAwayFraction);
    stepsShown_[i] = run.steps.size();
  }
  legend->setVisible(graphCount() > 0);  // an empty legend is just a stray box
  scheduleReplot();
}

QCPGraph* RoundedAwayChart::runGraph(int run) const {
  return run >= 0 && run < static_cast<int>(graphs_.size()) ? graphs_[static_cast<size_t>(run)] : nullptr;
}

}  // namespace plab::ui
