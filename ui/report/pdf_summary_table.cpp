#include "report/pdf_summary_table.h"

#include <QFontMetrics>
#include <QRegularExpression>
#include <QStringList>
#include <algorithm>
#include <numeric>

#include "charts/run_colors.h"
#include "report/fp32_twin.h"
#include "report/run_figures.h"

namespace plab::ui {
namespace {

const QStringList kSummaryHeaders = {"Run", "Mode", "Status", "Steps", "Final loss", "Val loss", "Memory",
                              "State saved", "Peak saved (measured)", "Update lost", "Rounded away", "Tokens/s"};
constexpr int kFirstNumberColumn = 3;
constexpr int kStatusColumn = 2;
constexpr double kLargestPt = 8.0, kSmallestPt = 5.5;

// The same texts as the app's table and the HTML report (report/run_figures.h).
QStringList rowOf(const std::vector<plab::RunRecord>& runs, size_t i) {
  const plab::RunRecord& r = runs[i];
  const plab::report::RunFigureTexts f = plab::report::runFigureTexts(runs, i);
  const auto text = [](const std::string& t) { return QString::fromStdString(t); };
  return {QString::fromStdString(plab::report::runLabel(runs, i)),
          QString::fromStdString(plab::optimizerModeLabel(r.config.mode)),
          text(f.status), text(f.steps), text(f.finalLoss), text(f.finalValLoss), text(f.memory),
          text(f.stateSaved), text(f.peakSaved), text(f.updateLost), text(f.roundedAway), text(f.tokensPerSecond)};
}

struct ColumnLayout {
  QFont font;
  int pad = 0;
  std::vector<int> widths;  // including padding
  bool wrapAnywhere = false;  // the last resort: too wide even with words wrapped
};

// Measured by the painter itself: QFontMetrics on a QPdfWriter can read a
// little narrower than the text is drawn, which wrapped "completed".
int textWidth(QPainter& p, const QFont& font, const QString& text) {
  p.setFont(font);
  return p.boundingRect(QRect(0, 0, 100000, 1000), Qt::AlignLeft | Qt::TextSingleLine, text).width() + 1;
}

// Where a line may break: spaces, and after the hyphens of run names.
QStringList pieces(const QString& text) {
  static const QRegularExpression breaks("\\s+|(?<=-)");
  return text.split(breaks, Qt::SkipEmptyParts);
}

// The width a column's text needs, on one line or wrapped at pieces().
// Bold: headers are, and so is "failed".
int neededWidth(QPainter& p, const QFont& font, const QString& header, const std::vector<QStringList>& rows, int column,
                bool wrap) {
  QFont bold = font;
  bold.setBold(true);
  int w = 0;
  for (const QString& piece : wrap ? pieces(header) : QStringList{header}) w = std::max(w, textWidth(p, bold, piece));
  for (const QStringList& row : rows)
    for (const QString& piece : wrap && column < kFirstNumberColumn ? pieces(row[column]) : QStringList{row[column]})
      w = std::max(w, textWidth(p, bold, piece));
  return w;
}

ColumnLayout layoutAt(QPainter& p, const QFont& base, double pt, const std::vector<QStringList>& rows, bool wrap) {
  ColumnLayout layout;
  layout.font = base;
  layout.font.setPointSizeF(pt);
  layout.pad = QFontMetrics(layout.font, p.device()).averageCharWidth();
  for (int c = 0; c < kSummaryHeaders.size(); ++c)
    layout.widths.push_back(neededWidth(p, layout.font, kSummaryHeaders[c], rows, c, wrap) + 2 * layout.pad);
  return layout;
}

int totalWidth(const ColumnLayout& l) { return std::accumulate(l.widths.begin(), l.widths.end(), 0); }

// The most lines any body cell takes in this layout.
int tallestCell(QPainter& p, const ColumnLayout& layout, const std::vector<QStringList>& rows) {
  QFont bold = layout.font;
  bold.setBold(true);
  p.setFont(bold);
  const int lineH = QFontMetrics(bold, p.device()).lineSpacing();
  int lines = 1;
  for (const QStringList& row : rows)
    for (int c = 0; c < kFirstNumberColumn; ++c) {
      const QRect box(0, 0, layout.widths[static_cast<size_t>(c)] - 2 * layout.pad, 100000);
      lines = std::max(lines, (p.boundingRect(box, Qt::TextWordWrap, row[c]).height() + lineH / 2) / lineH);
    }
  return lines;
}

// Widest font first, every cell on one line; then headers and the name and
// mode columns wrapped between words, two lines at most; then a smaller
// font; at last, the widest columns capped and wrapped anywhere. Never
// elided.
ColumnLayout fitColumns(QPainter& p, const std::vector<QStringList>& rows, int pageWidth) {
  const QFont base = p.font();
  ColumnLayout layout;
  for (double pt = kLargestPt; pt >= kSmallestPt; pt -= 0.5) {
    ColumnLayout one = layoutAt(p, base, pt, rows, false);
    if (totalWidth(one) <= pageWidth) {
      const int extra = (pageWidth - totalWidth(one)) / static_cast<int>(one.widths.size());
      for (int& w : one.widths) w += extra;
      return one;
    }
    layout = layoutAt(p, base, pt, rows, true);
    if (totalWidth(layout) > pageWidth) continue;
    // The spare width goes to the wrapped text columns, up to one line each.
    int spare = pageWidth - totalWidth(layout);
    for (int c = 0; c < kFirstNumberColumn && spare > 0; ++c) {
      const size_t i = static_cast<size_t>(c);
      const int more = std::min(spare, std::max(0, one.widths[i] - layout.widths[i]));
      layout.widths[i] += more;
      spare -= more;
    }
    for (int& w : layout.widths) w += spare / static_cast<int>(layout.widths.size());
    if (tallestCell(p, layout, rows) <= 2 || pt - 0.5 < kSmallestPt) return layout;
  }
  // Still too wide at the smallest font: cap the widest columns.
  layout.wrapAnywhere = true;
  int lo = 1, hi = *std::max_element(layout.widths.begin(), layout.widths.end());
  const auto totalAt = [&](int cap) {
    int t = 0;
    for (int w : layout.widths) t += std::min(w, cap);
    return t;
  };
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (totalAt(mid) <= pageWidth) lo = mid;
    else hi = mid - 1;
  }
  for (int& w : layout.widths) w = std::min(w, lo);
  return layout;
}

}  // namespace

std::vector<QStringList> pdfSummaryRows(const std::vector<plab::RunRecord>& runs) {
  std::vector<QStringList> rows;
  for (size_t i = 0; i < runs.size(); ++i) rows.push_back(rowOf(runs, i));
  return rows;
}

void drawPdfSummaryTable(QPainter& p, PdfPageCursor& cur, const std::vector<plab::RunRecord>& runs) {
  const std::vector<QStringList> rows = pdfSummaryRows(runs);
  const ColumnLayout layout = fitColumns(p, rows, cur.width());
  const std::vector<QColor> colors = runColors(runs);

  auto cellFlags = [&layout](int column, bool header) {
    const int align = column >= kFirstNumberColumn ? Qt::AlignRight : Qt::AlignLeft;
    return align | (header ? Qt::AlignBottom : Qt::AlignVCenter) |
           (layout.wrapAnywhere ? Qt::TextWrapAnywhere : Qt::TextWordWrap);
  };
  auto drawRow = [&](const QStringList& cells, bool header, const QColor& nameColor) {
    QFont f = layout.font;
    f.setBold(header);
    p.setFont(f);
    int h = 0;
    for (int c = 0; c < cells.size(); ++c) {
      const QRect box(0, 0, layout.widths[static_cast<size_t>(c)] - 2 * layout.pad, 100000);
      h = std::max(h, p.boundingRect(box, cellFlags(c, header), cells[c]).height());
    }
    h += layout.pad;
    cur.ensure(h);
    if (header) p.fillRect(QRect(0, cur.y, cur.width(), h), QColor(230, 234, 240));
    int x = 0;
    for (int c = 0; c < cells.size(); ++c) {
      const int w = layout.widths[static_cast<size_t>(c)];
      QColor color = Qt::black;
      if (!header && c == 0) color = nameColor;
      if (!header && c == kStatusColumn && cells[c] == "failed") color = QColor(176, 0, 32);
      if (!header && c == kStatusColumn && (cells[c] == "stopped" || cells[c] == "incomplete")) color = QColor(166, 99, 0);
      p.setPen(color);
      QFont cf = f;
      cf.setBold(header || (c == kStatusColumn && cells[c] == "failed"));
      p.setFont(cf);
      p.drawText(QRect(x + layout.pad, cur.y + layout.pad / 2, w - 2 * layout.pad, h - layout.pad), cellFlags(c, header),
                 cells[c]);
      x += w;
    }
    p.setPen(QColor(200, 200, 200));
    p.drawLine(0, cur.y + h, cur.width(), cur.y + h);
    p.setPen(Qt::black);
    cur.y += h;
  };
  drawRow(kSummaryHeaders, true, Qt::black);
  for (size_t i = 0; i < runs.size(); ++i) drawRow(rows[i], false, colors[i]);
}

}  // namespace plab::ui
