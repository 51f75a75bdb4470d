#pragma once
// Human-readable numbers for labels and tables.
#include <QString>
#include <cstdint>

namespace plab::ui {

QString humanCount(int64_t n);       // 1234567 -> "1.23 M"
QString humanBytes(int64_t bytes);   // 1536 -> "1.50 KiB"
QString percentText(double fraction, int decimals = 1);  // 0.123 -> "12.3 %"
QString durationText(double seconds);                    // 75 -> "1 m 15 s"

}  // namespace plab::ui
