#pragma once
// One colour per optimizer mode (core's report/mode_colors.h), the same in
// every chart, the comparison table and the HTML, PNG and PDF reports.
#include <QColor>
#include <vector>

#include "report/mode_colors.h"
#include "report/run_report.h"

namespace plab::ui {

QColor toQColor(const plab::Rgb& c);
// The colours of runs shown together, in order (later runs of a mode that
// is already shown get lighter shades).
std::vector<QColor> runColors(const std::vector<plab::RunRecord>& runs);

}  // namespace plab::ui
