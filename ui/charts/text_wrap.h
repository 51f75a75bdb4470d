#pragma once
// Word-wrapping for text that Qt does not wrap itself (QCustomPlot's text
// elements): a chart's explanation would otherwise be cut at both ends in
// a narrow chart.
#include <QFontMetrics>
#include <QString>

namespace plab::ui {

// text's lines (split at '\n') broken at spaces so that each fits width
// pixels; a single word wider than width stays whole on its own line.
QString wrapToWidth(const QString& text, const QFontMetrics& metrics, int width);

}  // namespace plab::ui
