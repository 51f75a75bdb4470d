#include "report/svg_util.h"

#include <cmath>
#include <iomanip>
#include <sstream>

namespace plab::report {

std::string escapeXml(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string num(double v, int precision) {
  if (!std::isfinite(v)) return "nan";
  if (std::fabs(v) < 1e-12) v = 0;  // no "-0" or 1e-17 noise on axes
  std::ostringstream s;
  s << std::setprecision(precision) << v;
  return s.str();
}

std::vector<double> niceTicks(double lo, double hi, int target) {
  if (!(hi > lo)) return {lo};
  const double rawStep = (hi - lo) / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(rawStep)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * mag;
    if (step >= rawStep) break;
  }
  std::vector<double> ticks;
  for (double t = std::ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step) ticks.push_back(t);
  return ticks;
}

const char* seriesColor(size_t index) {
  static const char* const colors[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                       "#E69F00", "#56B4E9", "#000000", "#F0E442"};
  return colors[index % (sizeof(colors) / sizeof(colors[0]))];
}

}  // namespace plab::report
