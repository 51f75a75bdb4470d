#pragma once
// The charts of a run report as SVG, built from run records. Shared by the
// HTML report and the files under charts/. Torch-free.
#include <string>
#include <vector>

#include "report/mode_colors.h"
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

// The layer heatmaps' colour scale, shared by the app and the SVG: 0 % is
// its first colour (pale yellow), never white, so that 0 % (an fp32 run)
// does not read as "not measured", which is hatched.
Rgb heatmapColor(double fraction);  // 0..1, clamped
struct HeatmapStop {
  double at;  // 0..1
  Rgb color;
};
const std::vector<HeatmapStop>& heatmapScale();

enum class LayerMetric {
  RoundedAway,
  UpdateLost,
  Fp16GradFlush,            // fp16-mixed: gradient elements fp16 would flush to zero
  GemmUnderflowInput,       // low-precision GEMMs: non-zero elements quantized to zero, per operand
  GemmUnderflowWeight,
  GemmUnderflowGradOutput,
  GemmSaturation,           // the layer's most saturated operand
  MomentErrorM,             // quantized moments: ||stored - exact|| / ||exact|| of m per window
  MomentErrorV,             // likewise of v
};
// One metric per layer (rows) over step buckets (columns): the share
// rounded away in single steps, the windowed update lost (cells whose
// windows are all noise at the layer's size are grey, as in the app), the
// fp16 flush share or a GEMM operand statistic.
bool runHasLayerMetric(const RunRecord& run, LayerMetric metric);
std::string renderLayerHeatmap(const RunRecord& run, LayerMetric metric = LayerMetric::RoundedAway, int maxBuckets = 40);

// File-system friendly version of a run name.
std::string safeFileName(const std::string& name);

}  // namespace plab::report
