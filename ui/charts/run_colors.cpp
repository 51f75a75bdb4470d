#include "charts/run_colors.h"

#include <array>

namespace plab::ui {

QColor runColor(int runIndex) {
  // Tableau 10: distinguishable and print-friendly.
  static const std::array<QColor, 10> palette = {
      QColor(31, 119, 180), QColor(255, 127, 14), QColor(44, 160, 44),  QColor(214, 39, 40),
      QColor(148, 103, 189), QColor(140, 86, 75), QColor(227, 119, 194), QColor(127, 127, 127),
      QColor(188, 189, 34),  QColor(23, 190, 207)};
  const int n = static_cast<int>(palette.size());
  return palette[static_cast<size_t>(((runIndex % n) + n) % n)];
}

}  // namespace plab::ui
