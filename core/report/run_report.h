#pragma once
// Run reports: a folder with config.json (re-runnable by the CLI),
// run_info.json, summary.json, metrics.jsonl/csv, layers.csv, charts as SVG
// and a self-contained report.html (charts inline). The PDF and PNG charts
// are rendered by the Qt layer (ui/report) from the same data.
#include <filesystem>
#include <string>
#include <vector>

#include "train/run_config.h"
#include "train/step_metrics.h"

namespace plab {

struct RunRecord {
  RunConfig config;
  RunInfo info;
  std::vector<StepMetrics> steps;
  RunResult result;
  // No result from the trainer yet: read from a folder without summary.json
  // (killed, or running in another process) or still running here. Views
  // show the figures its steps measured (report/run_figures.h).
  bool incomplete = false;
  // The folder name of the fp32 run this run is measured against, chosen by
  // hand (display.json "fp32_reference"); "": the twin rule picks
  // (report/fp32_twin.h).
  std::string fp32Reference;
};

// Writes everything for one run into dir (created). Throws IoError naming
// the file on failure, leaving files already written in place.
void writeRunReport(const std::filesystem::path& dir, const RunRecord& run);

// Several runs on the same model/data/seed: one sub-folder per run plus a
// comparison report.html/summary.csv with overlaid curves.
void writeComparisonReport(const std::filesystem::path& dir, const std::vector<RunRecord>& runs);

// The HTML alone (used by the Qt PDF renderer too).
std::string renderReportHtml(const std::vector<RunRecord>& runs, const std::string& title);

// A line chart as standalone SVG: one polyline per series.
struct ChartSeries {
  std::string label;
  std::vector<double> x, y;
  std::string color;  // "#rrggbb"; empty: the next of a fixed palette
  std::vector<double> dashes;  // dash and gap lengths in line widths (repeatDashPattern); empty: solid
};
std::string renderSvgLineChart(const std::string& title, const std::string& xLabel,
                               const std::string& yLabel, const std::vector<ChartSeries>& series,
                               bool logY = false);

}  // namespace plab
