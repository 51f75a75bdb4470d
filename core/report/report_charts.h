#pragma once
// The charts of a run report as SVG, built from run records. Shared by the
// HTML report and the files under charts/. Torch-free.
#include <string>
#include <vector>

#include "report/run_report.h"

namespace plab::report {

struct SvgChart {
  std::string fileName;  // "loss.svg"
  std::string title;
  std::string svg;
};

// loss, val_loss, rounded_away, memory, then one layer heatmap per run.
std::vector<SvgChart> renderReportCharts(const std::vector<RunRecord>& runs);

// Stacked bars of the measured memory per run next to the fp32 baseline.
std::string renderMemoryChart(const std::vector<RunRecord>& runs);

// Rounded-away fraction per layer (rows) over step buckets (columns).
std::string renderLayerHeatmap(const RunRecord& run, int maxBuckets = 40);

// File-system friendly version of a run name.
std::string safeFileName(const std::string& name);

}  // namespace plab::report
