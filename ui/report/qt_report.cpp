#include "report/qt_report.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFontMetrics>
#include <QPageLayout>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <algorithm>

#include "report/fp32_comparison.h"
#include "report/pdf_config_appendix.h"
#include "report/pdf_page_cursor.h"
#include "report/pdf_summary_table.h"
#include "report/report_header.h"
#include "report/run_figures.h"
#include "util/errors.h"

namespace plab::ui {
namespace {

std::string text(const QString& s) { return s.toStdString(); }

constexpr int kGridColumns = 2;  // small charts and heatmaps side by side

QFont sized(const QFont& base, double pt, bool bold = false) {
  QFont f = base;
  f.setPointSizeF(pt);
  f.setBold(bold);
  return f;
}

// A paragraph that wraps at the page width; starts a new page if needed.
void drawParagraph(QPainter& p, PdfPageCursor& cur, const QString& line, const QColor& color = Qt::black) {
  const QRect box = p.boundingRect(QRect(0, 0, cur.width(), 100000), Qt::TextWordWrap, line);
  cur.ensure(box.height());
  p.setPen(color);
  p.drawText(QRect(0, cur.y, cur.width(), box.height()), Qt::TextWordWrap, line);
  p.setPen(Qt::black);
  cur.y += box.height();
}

void drawTitleBlock(QPainter& p, PdfPageCursor& cur, const std::vector<plab::RunRecord>& runs, const QString& title) {
  const QFont base = p.font();
  p.setFont(sized(base, 16, true));
  const int titleH = QFontMetrics(p.font(), p.device()).height();
  p.drawText(QRect(0, cur.y, cur.width(), titleH), Qt::AlignLeft | Qt::AlignVCenter, title);
  cur.y += titleH + titleH / 6;
  p.setFont(sized(base, 8));
  const QColor grey(90, 90, 90);
  drawParagraph(p, cur,
                QString("Precision Lab %1 — %2 — %3 run(s)")
                    .arg(QString(PLAB_VERSION), QDateTime::currentDateTime().toString(Qt::ISODate))
                    .arg(runs.size()),
                grey);
  drawParagraph(p, cur, QString::fromStdString(plab::report::reportHeaderLine(runs)), grey);
  cur.y += QFontMetrics(p.font(), p.device()).height();
}

// Each run's verdict against fp32, then why runs ended early.
void drawVerdicts(QPainter& p, PdfPageCursor& cur, const std::vector<plab::RunRecord>& runs) {
  p.setFont(sized(p.font(), 7));
  const int lineH = QFontMetrics(p.font(), p.device()).height();
  cur.y += lineH / 2;
  for (size_t i = 0; i < runs.size(); ++i) {
    drawParagraph(p, cur, QString::fromStdString(plab::report::runLabel(runs, i) + " — " +
                                                 plab::report::comparisonVerdict(runs, i)));
  }
  cur.y += lineH / 2;
  for (size_t i = 0; i < runs.size(); ++i) {
    const plab::RunRecord& r = runs[i];
    if (r.result.message.empty()) continue;
    drawParagraph(p, cur,
                  QString::fromStdString(plab::report::runLabel(runs, i) + " (" + plab::report::runStatusText(r) +
                                         "): " + r.result.message),
                  r.result.status == plab::RunStatus::Failed ? QColor(176, 0, 32) : QColor(Qt::black));
  }
  cur.y += lineH;
}

int scaledHeight(const QImage& image, int width) { return width * image.height() / std::max(1, image.width()); }

void drawFullWidth(QPainter& p, PdfPageCursor& cur, const QImage& image, const QString& note) {
  const int h = scaledHeight(image, cur.width());
  const int noteH = note.isEmpty() ? 0 : p.boundingRect(QRect(0, 0, cur.width(), 100000), Qt::TextWordWrap, note).height();
  cur.ensure(h + noteH);
  p.drawImage(QRect(0, cur.y, cur.width(), h), image);
  cur.y += h;
  if (!note.isEmpty()) drawParagraph(p, cur, note, QColor(90, 90, 90));
  cur.y += QFontMetrics(p.font(), p.device()).height() / 2;
}

// Small multiples: kGridColumns images a row, each scaled to the cell width;
// a null entry leaves its cell empty.
void drawGrid(QPainter& p, PdfPageCursor& cur, const std::vector<const QImage*>& images) {
  const int gap = cur.width() / 60;
  const int cellW = (cur.width() - gap * (kGridColumns - 1)) / kGridColumns;
  for (size_t first = 0; first < images.size(); first += kGridColumns) {
    int rowH = 0;
    for (size_t i = first; i < std::min(images.size(), first + kGridColumns); ++i)
      if (images[i]) rowH = std::max(rowH, scaledHeight(*images[i], cellW));
    cur.ensure(rowH);
    for (size_t i = first; i < std::min(images.size(), first + kGridColumns); ++i) {
      if (!images[i]) continue;
      const int x = static_cast<int>(i - first) * (cellW + gap);
      p.drawImage(QRect(x, cur.y, cellW, scaledHeight(*images[i], cellW)), *images[i]);
    }
    cur.y += rowH + gap;
  }
}

}  // namespace

void writeChartPngs(const std::vector<plab::RunRecord>& runs, const QString& dir) {
  writeChartPngs(renderReportImages(runs), dir);
}

void writeChartPngs(const std::vector<ReportImage>& images, const QString& dir) {
  if (!QDir().mkpath(dir)) throw plab::IoError("cannot create the folder " + text(dir));
  for (const ReportImage& c : images) {
    const QString path = QDir(dir).filePath(c.file);
    if (!c.image.save(path, "PNG"))
      throw plab::IoError("cannot write " + text(path) + " (folder not writable or disk full?)");
  }
}

void writePdfReport(const std::vector<plab::RunRecord>& runs, const QString& pdfPath, const QString& title) {
  writePdfReport(runs, renderReportImages(runs), pdfPath, title);
}

void writePdfReport(const std::vector<plab::RunRecord>& runs, const std::vector<ReportImage>& images,
                    const QString& pdfPath, const QString& title) {
  {
    // QPdfWriter reports no I/O errors; find out up front whether the file can be written.
    QFile probe(pdfPath);
    if (!probe.open(QIODevice::WriteOnly | QIODevice::Truncate))
      throw plab::IoError("cannot write " + text(pdfPath) + ": " + text(probe.errorString()));
  }
  QPdfWriter writer(pdfPath);
  writer.setPageSize(QPageSize(QPageSize::A4));
  writer.setPageMargins(QMarginsF(12, 12, 12, 12), QPageLayout::Millimeter);
  writer.setResolution(150);
  writer.setTitle(title);
  writer.setCreator("Precision Lab " PLAB_VERSION);

  QPainter p;
  if (!p.begin(&writer)) throw plab::IoError("cannot start the PDF in " + text(pdfPath));
  PdfPageCursor cur(writer, p);
  const QFont base = p.font();

  drawTitleBlock(p, cur, runs, title);
  p.setFont(base);
  drawPdfSummaryTable(p, cur, runs);
  p.setFont(base);
  drawVerdicts(p, cur, runs);

  // The loss charts span the page; the others and the per-run heatmaps
  // (one colour scale for all) go side by side; then, under a line that
  // gives their scale, each run's moment-error maps (m beside v) on a row.
  std::vector<const QImage*> grid, momentMaps;
  double momentScale = 0;
  for (const ReportImage& c : images) {
    p.setFont(sized(base, 7));
    if (c.kind == ReportImageKind::Loss)
      drawFullWidth(p, cur, c.image,
                    runs.size() > 1 ? "Curves that coincide are drawn over each other: earlier runs are drawn wider, "
                                      "so a hidden one shows as a coloured rim. The next chart shows the differences."
                                    : QString());
    else if (c.kind == ReportImageKind::LossVsFp32)
      drawFullWidth(p, cur, c.image, QString());
    else if (c.kind == ReportImageKind::MomentErrorM || c.kind == ReportImageKind::MomentErrorV) {
      // m then v of each run (the order of the jobs): a row per run.
      if (c.kind == ReportImageKind::MomentErrorM && momentMaps.size() % kGridColumns != 0) momentMaps.push_back(nullptr);
      momentMaps.push_back(&c.image);
      momentScale = c.scaleMax;
    } else {
      grid.push_back(&c.image);
    }
  }
  drawGrid(p, cur, grid);
  if (!momentMaps.empty()) {
    p.setFont(sized(base, 7));
    const QString note = QString("Moment error (runs with quantized moments, adamw.moments 8bit, 4bit or fp8), first "
                                 "moment (m) left, second (v) right: ||stored − exact|| / ||exact|| per layer and window, "
                                 "the exact moment being the fp32 one each step computed from the stored one. These maps "
                                 "share a colour scale of 0–%1 %; the update-lost maps above, 0–100 %.")
                             .arg(momentScale, 0, 'g', 3);
    // The line and the first row of maps on one page.
    const int cellW = (cur.width() - cur.width() / 60 * (kGridColumns - 1)) / kGridColumns;
    cur.ensure(p.boundingRect(QRect(0, 0, cur.width(), 100000), Qt::TextWordWrap, note).height() +
               scaledHeight(*momentMaps.front(), cellW));
    drawParagraph(p, cur, note, QColor(90, 90, 90));
    cur.y += QFontMetrics(p.font(), p.device()).height() / 4;
    drawGrid(p, cur, momentMaps);
  }

  p.setFont(base);
  drawPdfConfigAppendix(p, cur, runs);
  if (!p.end()) throw plab::IoError("cannot finish the PDF " + text(pdfPath));
  if (QFile(pdfPath).size() == 0) throw plab::IoError("the PDF " + text(pdfPath) + " came out empty (disk full?)");
}

}  // namespace plab::ui
