#pragma once
// How runs are drawn (core's report/mode_colors.h), the same in every chart,
// the legend above them, the comparison table and the HTML, PNG and PDF
// reports: the mode's colour, and for a later run of a mode a dash pattern
// and a marker of its own.
#include <QColor>
#include <QPen>
#include <QPixmap>
#include <vector>

#include "qcustomplot.h"
#include "report/mode_colors.h"
#include "report/run_report.h"

namespace plab::ui {

QColor toQColor(const plab::Rgb& c);
// Each run's mode colour, in order.
std::vector<QColor> runColors(const std::vector<plab::RunRecord>& runs);

// The run's colour and dash pattern at the given width.
QPen runPen(const plab::RunStyle& style, double width);
// The marker of the points of a run's curves: a disc, then a square,
// triangle, diamond... for later runs of a mode.
QCPScatterStyle::ScatterShape runMarker(int repeat);
// A short line in the run's pen, for legends outside a chart.
QPixmap runStyleSample(const plab::RunStyle& style, int width = 26, int height = 10);
// The same over a band in the colour: a group's mean and range.
QPixmap groupStyleSample(const plab::RunStyle& style, int width = 26, int height = 10);

}  // namespace plab::ui
