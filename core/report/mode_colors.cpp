#include "report/mode_colors.h"

#include <cstdio>
#include <map>

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

std::vector<RunStyle> runStyles(const std::vector<RunRecord>& runs) {
  std::vector<RunStyle> styles(runs.size());
  std::map<OptimizerMode, int> seen;
  for (size_t i : report::startOrder(runs)) {
    const OptimizerMode mode = runs[i].config.mode;
    styles[i] = {modeColor(mode), seen[mode]++};
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
