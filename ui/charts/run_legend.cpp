#include "charts/run_legend.h"

#include <QBuffer>
#include <QHash>
#include <QResizeEvent>
#include <algorithm>

#include "charts/loss_chart.h"
#include "charts/run_chart.h"
#include "charts/run_colors.h"
#include "report/fp32_twin.h"

namespace plab::ui {
namespace {

constexpr int kSampleWidth = 26;
constexpr int kSampleHeight = 10;
const char* const kLegendGap = "&nbsp;&nbsp;&nbsp;";
const char* const kHint = "Line: train loss, marks: validation loss; a later run of a colour is dashed, dotted... "
                          "in that colour; a group is its mean with a band over its runs' range. The runs table "
                          "is the full legend: tick or untick runs and groups there.";

// The sample inline, as a data URL (QLabel's rich text reads those);
// encoded once per style, as the legend is refreshed with every step.
QString sampleHtml(const plab::RunStyle& style, bool band) {
  static QHash<QString, QString> cache;
  const QString key = QString::fromStdString(plab::hexColor(style.color)) + QString::number(style.repeat) + (band ? "b" : "");
  if (const auto it = cache.constFind(key); it != cache.constEnd()) return *it;
  QByteArray png;
  QBuffer buffer(&png);
  buffer.open(QIODevice::WriteOnly);
  (band ? groupStyleSample(style, kSampleWidth, kSampleHeight) : runStyleSample(style, kSampleWidth, kSampleHeight))
      .save(&buffer, "PNG");
  const QString html = QString("<img src=\"data:image/png;base64,%1\" width=\"%2\" height=\"%3\" alt=\"%4\">")
                           .arg(QString::fromLatin1(png.toBase64()))
                           .arg(kSampleWidth)
                           .arg(kSampleHeight)
                           .arg(QString::fromStdString(plab::hexColor(style.color) + " " + plab::repeatStyleName(style.repeat)));
  cache.insert(key, html);
  return html;
}

}  // namespace

RunLegend::RunLegend(QWidget* parent) : QLabel(parent) {
  setObjectName("runLegend");
  setWordWrap(false);  // the lines are laid out here: at most kMaxLines
  setTextFormat(Qt::RichText);
  setContentsMargins(6, 0, 6, 0);
  setToolTip(kHint);
}

void RunLegend::showSeries(const std::vector<ChartSeries>& series) {
  // Short, as in the charts.
  std::vector<QString> labels;
  if (difference_) labels = LossChart::differenceLabels(series);
  else
    for (const ChartSeries& s : series) labels.push_back(s.label);
  const QFontMetrics metrics(font());
  QStringList names;
  entries_.clear();
  for (size_t i = 0; i < series.size(); ++i) {
    const bool measured = std::any_of(series[i].runs.begin(), series[i].runs.end(), [](const plab::RunRecord* r) { return !r->steps.empty(); });
    if (!measured) continue;
    const plab::RunStyle& style = series[i].style;
    QString whole = series[i].name.isEmpty() ? labels[i] : series[i].name;
    if (series[i].group())
      for (const plab::RunRecord* r : series[i].runs) whole += "\n    " + QString::fromStdString(r->config.name);
    names << whole + QString(" (%1%2)").arg(QString::fromStdString(plab::repeatStyleName(style.repeat)),
                                            series[i].group() ? ", mean with its range" : "");
    // Non-breaking hyphens, as the lines are laid out by width here.
    QString name = labels[i].toHtmlEscaped();
    name.replace('-', QChar(0x2011));
    entries_.push_back({sampleHtml(style, series[i].group()) + "&nbsp;" + name,
                        kSampleWidth + metrics.horizontalAdvance(" " + labels[i])});
  }
  setToolTip(names.isEmpty() ? QString(kHint) : QString(kHint) + "\n" + names.join("\n"));
  layOut();
  setVisible(!entries_.empty());
}

void RunLegend::layOut() {
  const QFontMetrics metrics(font());
  const int gap = metrics.horizontalAdvance("   ");
  const int available = std::max(width() - contentsMargins().left() - contentsMargins().right() - 4, 80);
  // Fill the lines in order; the last line keeps room for "+N more".
  QStringList lines;
  QString line;
  int used = 0;
  size_t i = 0;
  for (; i < entries_.size(); ++i) {
    const int w = entries_[i].width + (used > 0 ? gap : 0);
    const bool lastLine = lines.size() == kMaxLines - 1;
    const int more = i + 1 < entries_.size() && lastLine
                         ? gap + metrics.horizontalAdvance(QString("+%1 more (see the table)").arg(entries_.size() - i - 1))
                         : 0;
    if (used > 0 && used + w + more > available) {
      if (lastLine) break;
      lines << line;
      line.clear();
      used = 0;
      --i;  // this entry starts the next line
      continue;
    }
    line += (used > 0 ? kLegendGap : "") + entries_[i].html;
    used += w;
  }
  shown_ = static_cast<int>(i);
  if (i < entries_.size())
    line += QString("%1<span style=\"color:#555\">+%2 more (see the table)</span>").arg(used > 0 ? kLegendGap : "").arg(entries_.size() - i);
  if (!line.isEmpty()) lines << line;
  lines_ = static_cast<int>(lines.size());
  setText(lines.join("<br>"));
}

void RunLegend::resizeEvent(QResizeEvent* event) {
  QLabel::resizeEvent(event);
  if (event->size().width() != event->oldSize().width()) layOut();
}

QSize RunLegend::minimumSizeHint() const {
  // Never as wide as its text (the row would push the window wider); always
  // room for its lines.
  return {80, QLabel::minimumSizeHint().height()};
}

QSize RunLegend::sizeHint() const { return {200, QLabel::sizeHint().height()}; }

}  // namespace plab::ui
