#pragma once
// One color per run, the same in every chart and in the comparison table.
#include <QColor>

namespace plab::ui {

QColor runColor(int runIndex);

}  // namespace plab::ui
