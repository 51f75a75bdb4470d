#include "report/number_text.h"

#include <cmath>
#include <cstdio>

namespace plab::report {
namespace {

// "-0.0000" -> "0.0000", "+0.0000" -> "0.0000": a sign needs a digit to belong to.
std::string withoutSignOfZero(std::string text) {
  if ((text[0] == '-' || text[0] == '+') && text.find_first_of("123456789") == std::string::npos) text.erase(0, 1);
  return text;
}

std::string format(double v, bool sign) {
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
  const double a = std::fabs(v);
  char buf[64];
  if (a > 0 && a < 1e-4) {  // tiny: three significant digits, not a row of zeros
    std::snprintf(buf, sizeof buf, sign ? "%+.2e" : "%.2e", v);
    return buf;
  }
  int decimals = 4;
  // Small values keep three significant digits.
  if (a > 0 && a < 0.01) decimals = std::min(12, 2 - static_cast<int>(std::floor(std::log10(a))));
  std::snprintf(buf, sizeof buf, sign ? "%+.*f" : "%.*f", decimals, v);
  return withoutSignOfZero(buf);
}

}  // namespace

std::string lossText(double v) { return format(v, false); }
std::string lossDeltaText(double v) { return format(v, true); }

std::string fixedText(double v, int decimals) {
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return withoutSignOfZero(buf);
}

std::string signedFixedText(double v, int decimals) {
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "+inf" : "-inf");
  char buf[64];
  std::snprintf(buf, sizeof buf, "%+.*f", decimals, v);
  return withoutSignOfZero(buf);
}

std::string percentText(double fraction, int decimals) { return fixedText(100 * fraction, decimals) + " %"; }

std::string savingText(double savedFraction, int decimals) {
  const std::string magnitude = percentText(std::fabs(savedFraction), decimals);
  if (!std::isfinite(savedFraction) || magnitude.find_first_of("123456789") == std::string::npos) return magnitude;
  return (savedFraction > 0 ? "−" : "+") + magnitude;
}

std::string mibText(int64_t bytes) { return fixedText(double(bytes) / (1024.0 * 1024.0), 2) + " MiB"; }

}  // namespace plab::report
