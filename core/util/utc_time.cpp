#include "util/utc_time.h"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <ctime>

namespace plab {

std::string utcTimestampNow() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[40];
  const size_t n = std::strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(stamp + n, sizeof(stamp) - n, ".%03dZ", static_cast<int>(ms < 0 ? ms + 1000 : ms));
  return stamp;
}

std::string sortableUtcStamp(const std::string& iso) {
  // YYYY-MM-DDTHH:MM:SS[.f{1,9}]Z
  static const char kShape[] = "dddd-dd-ddTdd:dd:dd";
  const size_t fixed = sizeof(kShape) - 1;
  if (iso.size() < fixed + 1 || iso.size() > fixed + 11 || iso.back() != 'Z') return {};
  std::string out;
  for (size_t i = 0; i < fixed; ++i) {
    const char c = iso[i];
    if (kShape[i] == 'd') {
      if (!std::isdigit(static_cast<unsigned char>(c))) return {};
      out += c;
    } else if (c != kShape[i]) {
      return {};
    }
  }
  std::string fraction;
  const size_t end = iso.size() - 1;  // before the 'Z'
  if (end > fixed) {
    if (iso[fixed] != '.' || end == fixed + 1) return {};
    for (size_t i = fixed + 1; i < end; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(iso[i]))) return {};
      fraction += iso[i];
    }
  }
  fraction.resize(3, '0');
  return out + fraction;
}

}  // namespace plab
