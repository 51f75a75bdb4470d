#pragma once
// How a run is drawn, the same in the desktop charts, legend and table, the
// PNG/PDF report and the HTML/SVG report: one colour per optimizer mode, and
// for a second, third... run of a mode that colour again with a line style
// of its own (dashed, dotted, dash-dot...). A lighter shade was used before
// and collided with the next mode's colour (bf16's second run next to
// bf16-nearest's orange). Which run is the second follows the order runs
// started (report/run_order.h), not the list order, so a run keeps its
// style after a restart. Torch-free and Qt-free.
#include <string>
#include <vector>

#include "formats/gemm_format_id.h"
#include "precision/optimizer_mode.h"
#include "report/run_report.h"

namespace plab {

struct Rgb {
  int r = 0, g = 0, b = 0;
  bool operator==(const Rgb& o) const { return r == o.r && g == o.g && b == o.b; }
};

Rgb modeColor(OptimizerMode mode);
// A run whose products use a low-precision GEMM format is drawn in that
// format's colour (none of them a mode's), so that a comparison of formats
// on one recipe reads by colour, not only by dashes.
Rgb gemmFormatColor(GemmFormat format);
// The colour a run is drawn in: its GEMM format's when not bf16, else its mode's.
Rgb runColor(const RunConfig& config);

struct RunStyle {
  Rgb color;       // runColor
  int repeat = 0;  // 0: the first run of its colour to start; 1, 2...: later ones
  bool operator==(const RunStyle& o) const { return color == o.color && repeat == o.repeat; }
};

// The style of each of runs shown together, in their order.
std::vector<RunStyle> runStyles(const std::vector<RunRecord>& runs);
// The same with the runs' start order already known (report::startOrder).
std::vector<RunStyle> runStyles(const std::vector<RunRecord>& runs, const std::vector<size_t>& startOrder);
// Each run's mode colour, in order (repeats are told apart by line style).
std::vector<Rgb> runColors(const std::vector<OptimizerMode>& modes);

// The dash pattern of a repeat: dash and gap lengths in line widths (QPen's
// setDashPattern; SVG's stroke-dasharray once multiplied by the width).
// Empty (solid) for repeat 0, and a different pattern for every repeat.
std::vector<double> repeatDashPattern(int repeat);
// "solid", "dashed", "dotted", "dash-dot"... for tooltips and captions.
std::string repeatStyleName(int repeat);

std::string hexColor(const Rgb& c);  // "#0072b2"

}  // namespace plab
