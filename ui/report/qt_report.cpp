#include "report/qt_report.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFontDatabase>
#include <QFontMetrics>
#include <QPageLayout>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <memory>

#include "charts/run_colors.h"
#include "report/fp32_comparison.h"
#include "report/number_text.h"
#include "report/report_header.h"
#include "run/run_summary.h"
#include "util/errors.h"
#include "util/format.h"

namespace plab::ui {
namespace {

std::string text(const QString& s) { return s.toStdString(); }

QString statusText(const plab::RunRecord& r) { return QString::fromStdString(plab::runStatusId(r.result.status)); }

// Paints top to bottom, starting a new page when the next block does not fit.
class PageCursor {
 public:
  PageCursor(QPdfWriter& writer, QPainter& painter) : writer_(writer), painter_(painter) {}
  int width() const { return painter_.viewport().width(); }
  int height() const { return painter_.viewport().height(); }
  int y = 0;
  void ensure(int h) {
    if (y + h > height() && y > 0) newPage();
  }
  void newPage() {
    writer_.newPage();
    y = 0;
  }

 private:
  QPdfWriter& writer_;
  QPainter& painter_;
};

void drawSummaryTable(QPainter& p, PageCursor& cur, const std::vector<plab::RunRecord>& runs) {
  const QStringList headers = {"Run", "Mode", "Status", "Steps", "Final loss", "Val loss",
                               "Memory", "Saved", "Update lost", "Rounded", "Tokens/s"};
  const std::vector<double> widths = {0.17, 0.12, 0.09, 0.08, 0.08, 0.08, 0.09, 0.07, 0.08, 0.07, 0.07};
  QFont font = p.font();
  font.setPointSizeF(8);
  p.setFont(font);
  const int rowH = QFontMetrics(font, p.device()).height() + 8;
  // The run's name in its chart colour (one per optimizer mode).
  auto drawRow = [&](const QStringList& cells, bool header, const QColor& nameColor) {
    cur.ensure(rowH);
    double x = 0;
    if (header) p.fillRect(QRect(0, cur.y, cur.width(), rowH), QColor(230, 234, 240));
    QFont f = font;
    f.setBold(header);
    p.setFont(f);
    for (int c = 0; c < cells.size(); ++c) {
      const int w = static_cast<int>(widths[static_cast<size_t>(c)] * cur.width());
      const bool failed = !header && c == 2 && cells[c] == "failed";
      p.setPen(c == 0 ? nameColor : failed ? QColor(176, 0, 32) : QColor(Qt::black));
      p.drawText(QRect(static_cast<int>(x) + 4, cur.y, w - 8, rowH), Qt::AlignVCenter | Qt::AlignLeft,
                 QFontMetrics(f, p.device()).elidedText(cells[c], Qt::ElideRight, w - 8));
      x += w;
    }
    p.setPen(QColor(200, 200, 200));
    p.drawLine(0, cur.y + rowH, cur.width(), cur.y + rowH);
    p.setPen(Qt::black);
    cur.y += rowH;
  };
  drawRow(headers, true, Qt::black);
  const std::vector<QColor> colors = runColors(runs);
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    const RunSummary s = summarizeRun(r, true);
    drawRow({QString::fromStdString(r.config.name), QString::fromStdString(plab::optimizerModeLabel(r.config.mode)),
             statusText(r), QString("%1 / %2").arg(s.stepsDone).arg(r.config.steps),
             s.finalLoss ? QString::fromStdString(plab::report::lossText(*s.finalLoss)) : "–",
             s.finalValLoss ? QString::fromStdString(plab::report::lossText(*s.finalValLoss)) : "–",
             s.memoryBytes > 0 ? humanBytes(s.memoryBytes) : "–",
             s.memoryBytes > 0 ? percentText(s.savedFraction) : "–",
             plab::report::meanUpdateLost(r) ? percentText(*plab::report::meanUpdateLost(r), 2) : "–",
             percentText(s.meanRoundedAway, 2),
             s.tokensPerSecond > 0 ? QString::number(s.tokensPerSecond, 'f', 0) : "–"},
            false, colors[i]);
  }
  cur.y += rowH / 2;
  // The verdict of each run against fp32, then the messages of runs that ended early.
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto ref = plab::report::fp32ReferenceIndex(runs, i);
    const QString line = QString::fromStdString(runs[i].config.name + " — " +
                                                plab::report::runVerdict(runs[i], ref ? &runs[*ref] : nullptr));
    const QRect box = p.boundingRect(QRect(0, 0, cur.width(), 10000), Qt::TextWordWrap, line);
    cur.ensure(box.height());
    p.drawText(QRect(0, cur.y, cur.width(), box.height()), Qt::TextWordWrap, line);
    cur.y += box.height();
  }
  cur.y += rowH / 2;
  for (const auto& r : runs) {
    if (r.result.message.empty()) continue;
    const QString line = QString::fromStdString(r.config.name + " (" + plab::runStatusId(r.result.status) + "): " + r.result.message);
    const QRect box = p.boundingRect(QRect(0, 0, cur.width(), 10000), Qt::TextWordWrap, line);
    cur.ensure(box.height());
    p.setPen(r.result.status == plab::RunStatus::Failed ? QColor(176, 0, 32) : Qt::black);
    p.drawText(QRect(0, cur.y, cur.width(), box.height()), Qt::TextWordWrap, line);
    p.setPen(Qt::black);
    cur.y += box.height();
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
  writer.setPageMargins(QMarginsF(15, 15, 15, 15), QPageLayout::Millimeter);
  writer.setResolution(150);
  writer.setTitle(title);
  writer.setCreator("Precision Lab " PLAB_VERSION);

  QPainter p;
  if (!p.begin(&writer)) throw plab::IoError("cannot start the PDF in " + text(pdfPath));
  PageCursor cur(writer, p);

  // Title block.
  QFont base = p.font();
  QFont titleFont = base;
  titleFont.setPointSizeF(18);
  titleFont.setBold(true);
  p.setFont(titleFont);
  const int titleH = QFontMetrics(titleFont, &writer).height();
  p.drawText(QRect(0, cur.y, cur.width(), titleH), Qt::AlignLeft | Qt::AlignVCenter, title);
  cur.y += titleH + 6;
  QFont small = base;
  small.setPointSizeF(8.5);
  p.setFont(small);
  const int smallH = QFontMetrics(small, &writer).height();
  p.setPen(QColor(90, 90, 90));
  p.drawText(QRect(0, cur.y, cur.width(), smallH), Qt::AlignLeft,
             QString("Precision Lab %1 — %2 — %3 run(s)")
                 .arg(QString(PLAB_VERSION), QDateTime::currentDateTime().toString(Qt::ISODate))
                 .arg(runs.size()));
  cur.y += smallH;
  p.drawText(QRect(0, cur.y, cur.width(), smallH), Qt::AlignLeft, QString::fromStdString(plab::report::reportHeaderLine(runs)));
  p.setPen(Qt::black);
  cur.y += smallH * 2;

  drawSummaryTable(p, cur, runs);
  cur.y += smallH;

  // Charts: full page width, two per page.
  for (const ReportImage& c : images) {
    const int w = cur.width();
    const int h = w * c.image.height() / std::max(1, c.image.width());
    cur.ensure(h + smallH);
    p.drawImage(QRect(0, cur.y, w, h), c.image);
    cur.y += h + smallH;
  }

  // The exact configs, so the runs can be reproduced from the PDF alone.
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  mono.setPointSizeF(7.5);
  const int monoH = QFontMetrics(mono, &writer).lineSpacing();
  for (const auto& r : runs) {
    cur.newPage();
    QFont heading = base;
    heading.setPointSizeF(12);
    heading.setBold(true);
    p.setFont(heading);
    const int headingH = QFontMetrics(heading, &writer).height();
    p.drawText(QRect(0, cur.y, cur.width(), headingH), Qt::AlignLeft,
               QString("Config of %1").arg(QString::fromStdString(r.config.name)));
    cur.y += headingH + smallH / 2;
    p.setFont(mono);
    const QStringList lines = QString::fromStdString(r.config.toJson().dump(2)).split('\n');
    for (const QString& line : lines) {
      cur.ensure(monoH);
      p.drawText(QRect(0, cur.y, cur.width(), monoH), Qt::AlignLeft | Qt::TextSingleLine, line);
      cur.y += monoH;
    }
  }
  if (!p.end()) throw plab::IoError("cannot finish the PDF " + text(pdfPath));
  if (QFile(pdfPath).size() == 0) throw plab::IoError("the PDF " + text(pdfPath) + " came out empty (disk full?)");
}

}  // namespace plab::ui
