#pragma once
// Small helpers shared by the SVG/HTML report renderers. Torch-free.
#include <string>
#include <vector>

namespace plab::report {

std::string escapeXml(const std::string& s);
std::string num(double v, int precision = 4);  // compact number for labels and coordinates
// "Nice" axis ticks (1/2/5 x 10^k) covering [lo, hi].
std::vector<double> niceTicks(double lo, double hi, int target = 6);
// Series colours (colour-blind friendly), cycled.
const char* seriesColor(size_t index);

}  // namespace plab::report
