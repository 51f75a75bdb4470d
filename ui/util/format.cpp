#include "util/format.h"

#include <cmath>

namespace plab::ui {

QString humanCount(int64_t n) {
  const double v = static_cast<double>(n);
  const double a = std::fabs(v);
  if (a >= 1e9) return QString::number(v / 1e9, 'f', 2) + " B";
  if (a >= 1e6) return QString::number(v / 1e6, 'f', 2) + " M";
  if (a >= 1e3) return QString::number(v / 1e3, 'f', 1) + " k";
  return QString::number(n);
}

QString humanBytes(int64_t bytes) {
  const double v = static_cast<double>(bytes);
  const double a = std::fabs(v);
  if (a >= 1024.0 * 1024 * 1024) return QString::number(v / (1024.0 * 1024 * 1024), 'f', 2) + " GiB";
  if (a >= 1024.0 * 1024) return QString::number(v / (1024.0 * 1024), 'f', 2) + " MiB";
  if (a >= 1024.0) return QString::number(v / 1024.0, 'f', 1) + " KiB";
  return QString::number(bytes) + " B";
}

QString percentText(double fraction, int decimals) {
  return QString::number(fraction * 100.0, 'f', decimals) + " %";
}

QString durationText(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "–";
  const auto s = static_cast<int64_t>(std::llround(seconds));
  if (s < 60) return QString("%1 s").arg(s);
  if (s < 3600) return QString("%1 m %2 s").arg(s / 60).arg(s % 60);
  return QString("%1 h %2 m").arg(s / 3600).arg((s % 3600) / 60);
}

}  // namespace plab::ui
