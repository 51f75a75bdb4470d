#include "report/mode_colors.h"

#include <cstdio>
#include <map>
#include <tuple>

#include "report/run_order.h"

namespace plab {
namespace {

// Seven patterns for repeats 1..7; later repeats add spaced dots to them.
struct Pattern {
  std::vector<double> dashes;
  const char* name;
};
const Pattern kPatterns[] = {
    {{5, 3}, "dashed"},          {{1, 2}, "dotted"},           {{5, 2, 1, 2}, "dash-dot"},
    {{10, 3}, "long-dashed"},    {{5, 2, 1, 2, 1, 2}, "dash-dot-dot"},
    {{10, 3, 1, 3}, "long-dash-dot"}, {{10, 3, 4, 3}, "long-short-dashed"},
};
constexpr int kPatternCount = static_cast<int>(sizeof kPatterns / sizeof kPatterns[0]);

}  // namespace

Rgb modeColor(OptimizerMode mode) {
  // Okabe-Ito (colour-blind safe); fp32, the reference, in black.
  switch (mode) {
    case OptimizerMode::Fp32AdamW: return {0, 0, 0};
    case OptimizerMode::Bf16Plain: return {213, 94, 0};                // vermillion
    case OptimizerMode::Bf16Nearest: return {230, 159, 0};             // orange
    case OptimizerMode::Bf16Kahan: return {0, 114, 178};               // blue
    case OptimizerMode::Bf16StochasticRounding: return {0, 158, 115};  // bluish green
    case OptimizerMode::Fp32MasterWeights: return {204, 121, 167};     // reddish purple
    case OptimizerMode::Fp16Plain: return {240, 228, 66};              // yellow
    case OptimizerMode::Fp16Mixed: return {86, 180, 233};              // sky blue
  }
  return {127, 127, 127};
}

Rgb gemmFormatColor(GemmFormat format) {
  // Away from the mode colours above (Okabe-Ito) and from each other.
  switch (format) {
    case GemmFormat::Bf16: return {0, 114, 178};
    case GemmFormat::Fp8E4m3: return {140, 86, 75};    // brown
    case GemmFormat::Fp8E5m2: return {128, 128, 0};    // olive
    case GemmFormat::Mxfp8: return {123, 82, 171};     // purple
    case GemmFormat::Mxfp4: return {180, 0, 60};       // crimson
    case GemmFormat::Nvfp4: return {51, 110, 30};      // dark green
  }
  return {127, 127, 127};
}

Rgb runColor(const RunConfig& config) {
  return config.plan.gemm_format == GemmFormat::Bf16 ? modeColor(config.mode) : gemmFormatColor(config.plan.gemm_format);
}

std::vector<RunStyle> runStyles(const std::vector<RunRecord>& runs) { return runStyles(runs, report::startOrder(runs)); }

std::vector<RunStyle> runStyles(const std::vector<RunRecord>& runs, const std::vector<size_t>& startOrder) {
  std::vector<RunStyle> styles(runs.size());
  std::map<std::tuple<int, int, int>, int> seen;
  for (size_t i : startOrder) {
    const Rgb color = runColor(runs[i].config);
    styles[i] = {color, seen[{color.r, color.g, color.b}]++};
  }
  return styles;
}

std::vector<Rgb> runColors(const std::vector<OptimizerMode>& modes) {
  std::vector<Rgb> out;
  out.reserve(modes.size());
  for (OptimizerMode m : modes) out.push_back(modeColor(m));
  return out;
}

std::vector<double> repeatDashPattern(int repeat) {
  if (repeat <= 0) return {};
  std::vector<double> dashes = kPatterns[(repeat - 1) % kPatternCount].dashes;
  // A dot with a wide gap: no pattern above holds that pair, so none repeats.
  for (int extra = (repeat - 1) / kPatternCount; extra > 0; --extra) dashes.insert(dashes.end(), {1, 4});
  return dashes;
}

std::string repeatStyleName(int repeat) {
  if (repeat <= 0) return "solid";
  const int extra = (repeat - 1) / kPatternCount;
  std::string name = kPatterns[(repeat - 1) % kPatternCount].name;
  if (extra > 0) name += " +" + std::to_string(extra) + " dot" + (extra > 1 ? "s" : "");
  return name;
}

std::string hexColor(const Rgb& c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c.r & 0xff, c.g & 0xff, c.b & 0xff);
  return buf;
}

}  // namespace plab
