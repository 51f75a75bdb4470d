#include "charts/chart_series.h"

#include <algorithm>

#include "charts/run_chart.h"
#include "report/fp32_twin.h"
#include "report/run_relations.h"

namespace plab::ui {

std::vector<ChartSeries> seriesOfRuns(const std::vector<plab::RunRecord>& runs) {
  const plab::report::RunRelations relations = plab::report::relateRuns(runs);
  const std::vector<QString> labels = RunChart::legendLabels(runs);
  std::vector<ChartSeries> out;
  out.reserve(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    ChartSeries s;
    s.label = labels[i];
    s.name = QString::fromStdString(relations.labels[i]);
    s.style = relations.styles[i];
    s.runs = {&runs[i]};
    const auto twin = relations.twins[i];
    s.twins = {twin ? &runs[*twin] : nullptr};
    s.twinLabels = {twin ? labels[*twin] : QString()};
    s.twinsChosen = {!runs[i].fp32Reference.empty()};
    out.push_back(std::move(s));
  }
  return out;
}

uint64_t ChartSeries::version() const {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the runs and their step counts
  const auto mix = [&h](uint64_t v) {
    h ^= v;
    h *= 1099511628211ull;
  };
  for (size_t k = 0; k < runs.size(); ++k) {
    mix(reinterpret_cast<uintptr_t>(runs[k]));
    mix(runs[k]->steps.size());
    mix(reinterpret_cast<uintptr_t>(twins[k]));
    mix(twins[k] ? twins[k]->steps.size() : 0);
  }
  return h;
}

GroupCurve meanAndRange(const std::vector<std::map<int64_t, double>>& values) {
  GroupCurve c;
  if (values.empty()) return c;
  for (const auto& [step, first] : values.front()) {
    double sum = first, low = first, high = first;
    bool all = true;
    for (size_t k = 1; k < values.size() && all; ++k) {
      const auto it = values[k].find(step);
      if (it == values[k].end()) {
        all = false;
        break;
      }
      sum += it->second;
      low = std::min(low, it->second);
      high = std::max(high, it->second);
    }
    if (!all) continue;  // a step some run has not reached: the mean would change meaning there
    c.steps.push_back(static_cast<double>(step));
    c.mean.push_back(sum / static_cast<double>(values.size()));
    c.low.push_back(low);
    c.high.push_back(high);
  }
  return c;
}

}  // namespace plab::ui
