#include "report/number_text.h"

#include <cmath>
#include <cstdio>

namespace plab::report {
namespace {

std::string format(double v, bool sign) {
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
  int decimals = 4;
  // Small values keep three significant digits.
  const double a = std::fabs(v);
  if (a > 0 && a < 0.01) decimals = std::min(12, 2 - static_cast<int>(std::floor(std::log10(a))));
  char buf[64];
  std::snprintf(buf, sizeof buf, sign ? "%+.*f" : "%.*f", decimals, v);
  return buf;
}

}  // namespace

std::string lossText(double v) { return format(v, false); }
std::string lossDeltaText(double v) { return format(v, true); }

}  // namespace plab::report
