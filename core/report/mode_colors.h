#pragma once
// One colour per optimizer mode, the same in the desktop charts and table,
// the PNG/PDF report and the HTML/SVG report. A second or third run of the
// same mode in one comparison gets a lighter shade of its mode's colour.
// Torch-free and Qt-free.
#include <string>
#include <vector>

#include "precision/optimizer_mode.h"

namespace plab {

struct Rgb {
  int r = 0, g = 0, b = 0;
  bool operator==(const Rgb& o) const { return r == o.r && g == o.g && b == o.b; }
};

Rgb modeColor(OptimizerMode mode);
// shade 0: the mode's colour; 1, 2, ...: lighter, for later runs of the mode.
Rgb modeShade(OptimizerMode mode, int shade);
// The colours of runs shown together, in order: each run's mode colour,
// shaded by how many earlier runs share its mode.
std::vector<Rgb> runColors(const std::vector<OptimizerMode>& modes);
std::string hexColor(const Rgb& c);  // "#0072b2"

}  // namespace plab
