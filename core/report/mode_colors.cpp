#include "report/mode_colors.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace plab {

Rgb modeColor(OptimizerMode mode) {
  // Okabe-Ito (colour-blind safe); fp32, the reference, in black.
  switch (mode) {
    case OptimizerMode::Fp32AdamW: return {0, 0, 0};
    case OptimizerMode::Bf16Plain: return {213, 94, 0};                // vermillion
    case OptimizerMode::Bf16Nearest: return {230, 159, 0};             // orange
    case OptimizerMode::Bf16Kahan: return {0, 114, 178};               // blue
    case OptimizerMode::Bf16StochasticRounding: return {0, 158, 115};  // bluish green
    case OptimizerMode::Fp32MasterWeights: return {204, 121, 167};     // reddish purple
  }
  return {127, 127, 127};
}

Rgb modeShade(OptimizerMode mode, int shade) {
  const Rgb base = modeColor(mode);
  // Towards white, at most 70 % so the lightest shade stays visible on white.
  const double t = std::min(0.7, 0.28 * std::max(0, shade));
  auto mix = [t](int c) { return static_cast<int>(std::lround(c + (255 - c) * t)); };
  return {mix(base.r), mix(base.g), mix(base.b)};
}

std::vector<Rgb> runColors(const std::vector<OptimizerMode>& modes) {
  std::map<OptimizerMode, int> seen;
  std::vector<Rgb> out;
  out.reserve(modes.size());
  for (OptimizerMode m : modes) out.push_back(modeShade(m, seen[m]++));
  return out;
}

std::string hexColor(const Rgb& c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c.r & 0xff, c.g & 0xff, c.b & 0xff);
  return buf;
}

}  // namespace plab
