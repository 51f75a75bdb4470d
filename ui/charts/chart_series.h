#pragma once
// What a chart draws: series, each one run or a group of runs (a seed
// family, or the runs of a table group) drawn as the mean of its runs with
// a band over their range. A series names, for each of its runs, the fp32
// run it is measured against — any run of the workspace, drawn or not, so
// that "loss minus fp32" survives filtering the reference out of view —
// and carries the style the runs table shows in its swatch.
#include <QString>
#include <cstdint>
#include <map>
#include <vector>

#include "report/mode_colors.h"
#include "report/run_report.h"

namespace plab::ui {

struct ChartSeries {
  QString label;                               // legend and hover readout (shortened among the series)
  QString name;                                // the whole name (tooltips)
  plab::RunStyle style;                        // the table's swatch
  std::vector<const plab::RunRecord*> runs;    // one run, or a group's runs
  std::vector<const plab::RunRecord*> twins;   // per run: its fp32 reference, or nullptr
  std::vector<QString> twinLabels;             // per run: how the reference is named
  std::vector<bool> twinsChosen;               // per run: chosen by hand
  bool group() const { return runs.size() > 1; }
  // Changes whenever what the series draws may have: its runs and their
  // step counts. A chart redraws a group only when it changed.
  uint64_t version() const;
  const plab::RunRecord& first() const { return *runs.front(); }
};

// Every run its own series, styled and labelled among `runs` alone, twins
// found among them (report/fp32_twin.h): how an exported report draws.
std::vector<ChartSeries> seriesOfRuns(const std::vector<plab::RunRecord>& runs);

// A group's curve: at each step all its runs measured, the mean and the
// range. values[k] maps step -> value for run k.
struct GroupCurve {
  std::vector<double> steps, mean, low, high;
};
GroupCurve meanAndRange(const std::vector<std::map<int64_t, double>>& values);

}  // namespace plab::ui
