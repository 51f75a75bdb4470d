// The Qt half of reports: PDF and PNG charts from a synthetic RunRecord;
// unwritable destinations raise plab::IoError.
#include <QFile>
#include <algorithm>
#include <QImage>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include "charts/loss_chart.h"
#include "report/qt_report.h"
#include "report/report_images.h"
#include "support/test_registry.h"
#include "util/errors.h"

namespace test_qt_report {

namespace {

plab::RunRecord syntheticRecord(bool failed) {
  plab::RunRecord r;
  r.config.name = failed ? "bf16-nan" : "bf16-kahan";
  r.config.mode = failed ? plab::OptimizerMode::Bf16Plain : plab::OptimizerMode::Bf16Kahan;
  r.config.steps = 20;
  r.info.runName = r.config.name;
  r.info.parameterCount = 5000;
  r.info.fp32Baseline = plab::fp32AdamWBaseline(5000);
  r.info.layers = {"a", "b"};
  for (int s = 1; s <= 20; ++s) {
    plab::StepMetrics m;
    m.step = s;
    m.loss = 4.0 - 0.1 * s;
    m.roundedAwayFraction = 0.3;
    m.memory.weights = 10000;
    m.memory.moments = 20000;
    m.layers = {{"a", 0.1, 1.0}, {"b", 0.5, 1.0}};
    if (s % 10 == 0) m.valLoss = m.loss + 0.2;
    r.steps.push_back(m);
  }
  r.result.status = failed ? plab::RunStatus::Failed : plab::RunStatus::Completed;
  r.result.message = failed ? "loss became NaN at step 20" : "";
  r.result.stepsDone = 20;
  r.result.finalLoss = 2.0;
  return r;
}

// A run with windows per layer (update lost), and with 8bit moments the
// moment error of each window too.
plab::RunRecord windowedRecord(const std::string& name, bool quantizedMoments) {
  plab::RunRecord r = syntheticRecord(false);
  r.config.name = name;
  r.info.runName = name;
  r.config.mode = plab::OptimizerMode::Bf16StochasticRounding;
  if (quantizedMoments) r.config.adamw.moments = plab::MomentPrecision::Dynamic8bit;
  for (plab::StepMetrics& m : r.steps) {
    if (m.step % 5 != 0) continue;
    for (const char* layer : {"a", "b"}) {
      plab::LayerWindowMetrics w(layer, 0.2, 0.1, 0.01, std::nullopt, 5000);
      if (quantizedMoments) {
        w.momentErrorM = layer[0] == 'a' ? 0.0102 : 0.031;  // 3.1 %: the scale's top is 5 %
        w.momentErrorV = 0.0021;
      }
      m.windowLayers.push_back(w);
    }
  }
  return r;
}

// Pages of a PDF QPdfWriter wrote: its page objects (uncompressed
// dictionaries), so that no tool need be installed.
int pdfPageCount(const QString& pdf) {
  QFile f(pdf);
  if (!f.open(QIODevice::ReadOnly)) return -1;
  return static_cast<int>(QString::fromLatin1(f.readAll()).count(QRegularExpression("/Type\\s*/Page(?!s)")));
}

// Images a PDF QPdfWriter wrote holds: one XObject per image drawn.
int pdfImageCount(const QString& pdf) {
  QFile f(pdf);
  if (!f.open(QIODevice::ReadOnly)) return -1;
  return static_cast<int>(QString::fromLatin1(f.readAll()).count(QRegularExpression("/Subtype\\s*/Image\\b")));
}

int countKind(const std::vector<plab::ui::ReportImage>& images, plab::ui::ReportImageKind kind) {
  return static_cast<int>(std::count_if(images.begin(), images.end(), [kind](const auto& i) { return i.kind == kind; }));
}

// The PDF's text (poppler's pdftotext) in drawing order, so that a header
// wrapped onto two lines reads as its words; empty when the tool is missing.
QString pdfText(const QString& pdf) {
  QProcess p;
  p.start("pdftotext", {"-raw", pdf, "-"});
  if (!p.waitForFinished(30000) || p.exitCode() != 0) return {};
  // NFKC: the "ﬁ" ligature of the PDF's font reads as "fi".
  return QString::fromUtf8(p.readAllStandardOutput()).normalized(QString::NormalizationForm_KC);
}

}  // namespace

class TestQtReport : public QObject {
  Q_OBJECT
 private slots:
  void pdfStartsWithMagic() {
    QTemporaryDir dir;
    const QString pdf = dir.filePath("report.pdf");
    plab::ui::writePdfReport({syntheticRecord(false), syntheticRecord(true)}, pdf, "Synthetic comparison");
    QFile f(pdf);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY(f.size() > 10000);  // charts are embedded as images
    QCOMPARE(f.read(4), QByteArray("%PDF"));
  }

  void lossesKeepTheDigitsThatDiffer() {
    plab::RunRecord a = syntheticRecord(false), b = syntheticRecord(false);
    a.result.finalLoss = 2.6021;
    b.result.finalLoss = 2.6029;
    QTemporaryDir dir;
    const QString pdf = dir.filePath("report.pdf");
    plab::ui::writePdfReport({a, b}, pdf, "Digits");
    const QString text = pdfText(pdf);
    if (text.isEmpty()) QSKIP("pdftotext is not installed");
    QVERIFY2(text.contains("2.6021") && text.contains("2.6029"), qPrintable(text));
  }

  // Issue 11 item 4: seven runs make a compact PDF (summary, all curves,
  // heatmaps side by side, configs in an appendix) with no cell cut short.
  void sevenRunsMakeACompactPdf() {
    const std::pair<const char*, plab::OptimizerMode> modes[] = {
        {"fp32", plab::OptimizerMode::Fp32AdamW},
        {"bf16", plab::OptimizerMode::Bf16Plain},
        {"bf16-nearest", plab::OptimizerMode::Bf16Nearest},
        {"bf16-kahan", plab::OptimizerMode::Bf16Kahan},
        {"bf16-sr", plab::OptimizerMode::Bf16StochasticRounding},
        {"mixed", plab::OptimizerMode::Fp32MasterWeights},
        {"bf16-again", plab::OptimizerMode::Bf16Plain}};
    std::vector<plab::RunRecord> runs;
    for (const auto& [name, mode] : modes) {
      plab::RunRecord r = syntheticRecord(false);
      r.config.name = std::string("tiny-gpt2-finetune-") + name;
      r.config.mode = mode;
      r.info.runName = r.config.name;
      runs.push_back(r);
    }
    runs.back().result.status = plab::RunStatus::Failed;
    runs.back().result.message = "loss became NaN at step 20";
    const std::vector<plab::ui::ReportImage> images = plab::ui::renderReportImages(runs);
    int heatmaps = 0;
    for (const auto& i : images) heatmaps += i.kind == plab::ui::ReportImageKind::Heatmap;
    QCOMPARE(heatmaps, 7);  // one per run, not only the last

    QTemporaryDir dir;
    const QString pdf = dir.filePath("report.pdf");
    plab::ui::writePdfReport(runs, images, pdf, "Seven runs");
    const QString text = pdfText(pdf);
    if (text.isEmpty()) QSKIP("pdftotext is not installed");
    const int pages = static_cast<int>(text.count('\f'));
    QVERIFY2(pages >= 2 && pages <= 5, qPrintable(QString("%1 pages").arg(pages)));
    const QString words = text.simplified();  // wrapped headers read as one line
    for (const char* header : {"Run", "Mode", "Status", "Steps", "Final loss", "Val loss", "Memory", "State saved", "Peak saved (measured)",
                               "Update lost", "Rounded away", "Tokens/s"})
      QVERIFY2(words.contains(header), qPrintable(QString(header) + " missing in\n" + text.left(1500)));
    QVERIFY2(!text.contains("..."), "a cell was cut short with …");  // NFKC turned … into ...
    QVERIFY(words.contains("tiny-gpt2-finetune-bf16-nearest"));
    QVERIFY(words.contains("failed"));
    QVERIFY(words.contains("Appendix: run configurations"));
  }

  // Issue 40.3: runs with quantized moments get their moment-error maps (m
  // and v, one colour scale, labelled) beside the update-lost one, in the
  // PNGs and the PDF; runs without draw nothing extra.
  void momentErrorHeatmapsForQuantizedMomentsOnly() {
    using plab::ui::ReportImageKind;
    const std::vector<plab::RunRecord> runs = {windowedRecord("bf16-sr", false), windowedRecord("bf16-sr-8bit", true)};
    const std::vector<plab::ui::ReportImage> images = plab::ui::renderReportImages(runs);
    QCOMPARE(countKind(images, ReportImageKind::Heatmap), 2);
    QCOMPARE(countKind(images, ReportImageKind::MomentErrorM), 1);
    QCOMPARE(countKind(images, ReportImageKind::MomentErrorV), 1);
    QStringList order;
    for (const auto& i : images)
      if (i.kind == ReportImageKind::Heatmap || i.kind == ReportImageKind::MomentErrorM ||
          i.kind == ReportImageKind::MomentErrorV)
        order << i.file;
    // Each run's maps together, the 8bit run's moment maps after its update-lost one.
    QCOMPARE(order, (QStringList{"layers_heatmap_bf16-sr.png", "layers_heatmap_bf16-sr-8bit.png",
                                 "layers_moment_error_m_bf16-sr-8bit.png", "layers_moment_error_v_bf16-sr-8bit.png"}));
    for (const auto& i : images)
      if (i.kind == ReportImageKind::MomentErrorM || i.kind == ReportImageKind::MomentErrorV) {
        QCOMPARE(i.title, QString("bf16-sr-8bit"));
        QCOMPARE(i.scaleMax, 5.0);  // 3.1 % rounded up to 1, 2 or 5 x 10^k
      }
    QCOMPARE(plab::ui::momentErrorScaleMax({windowedRecord("x", false)}), 0.1);
    // Without a run that measured it: none at all.
    const std::vector<plab::ui::ReportImage> plain = plab::ui::renderReportImages({windowedRecord("bf16-sr", false)});
    QCOMPARE(countKind(plain, ReportImageKind::MomentErrorM) + countKind(plain, ReportImageKind::MomentErrorV), 0);

    QTemporaryDir dir;
    plab::ui::writeChartPngs(images, dir.filePath("charts"));
    QVERIFY(!QImage(dir.filePath("charts/layers_moment_error_m_bf16-sr-8bit.png")).isNull());
    QVERIFY(!QImage(dir.filePath("charts/layers_moment_error_v_bf16-sr-8bit.png")).isNull());
    const QString pdf = dir.filePath("report.pdf"), plainPdf = dir.filePath("plain.pdf");
    plab::ui::writePdfReport(runs, images, pdf, "Moments");
    plab::ui::writePdfReport({windowedRecord("bf16-sr", false)}, plain, plainPdf, "No moments");
    // Two runs' charts and four maps, the summary and the appendix: one row
    // more than without the moment maps (m beside v), not a page per map.
    // Every chart and map in the PDF: the moment maps too, and none extra without them.
    QCOMPARE(pdfImageCount(pdf), static_cast<int>(images.size()));
    QCOMPARE(pdfImageCount(plainPdf), static_cast<int>(plain.size()));
    const int pages = pdfPageCount(pdf);
    QVERIFY2(pages >= 2 && pages <= 3, qPrintable(QString("%1 pages").arg(pages)));
    const QString text = pdfText(pdf), plainText = pdfText(plainPdf);
    if (text.isEmpty()) QSKIP("pdftotext is not installed");
    const QString words = text.simplified();
    QVERIFY2(words.contains("These maps share a colour scale of 0–5 %"), qPrintable(words.left(3000)));
    QVERIFY(!plainText.simplified().contains("Moment error"));
    QCOMPARE(static_cast<int>(text.count('\f')), pages);
  }

  void chartPngs() {
    QTemporaryDir dir;
    const QString out = dir.filePath("nested/charts");
    plab::ui::writeChartPngs({syntheticRecord(false)}, out);
    for (const char* name : {"loss.png", "memory.png", "rounded_away.png", "layers_heatmap.png"}) {
      QImage image(out + "/" + name);
      QVERIFY2(!image.isNull(), name);
      QVERIFY(image.width() > 100);
    }
  }

  // Issue 20.8: an export froze the window (0.74 s with 6 runs, 2.5 s in
  // the issue) while charts were rasterized on the GUI thread. The GUI
  // thread now only records each chart's paint commands; the pixels are
  // drawn by rasterize() on the worker, and match what the chart draws.
  void jobsRecordAndTheWorkerRasterizes() {
    // One run: the export widens earlier runs' pens, which the chart alone does not.
    const std::vector<plab::RunRecord> runs = {syntheticRecord(false)};
    const auto jobs = plab::ui::reportImageJobs(std::make_shared<const std::vector<plab::RunRecord>>(runs));
    QVERIFY(!jobs.empty());
    plab::ui::ReportImage loss = jobs.front()();
    QCOMPARE(loss.file, QString("loss.png"));
    QVERIFY(loss.image.isNull());
    QVERIFY(loss.picture.size() > 0);
    plab::ui::rasterize(loss);
    QCOMPARE(loss.image.size(), loss.size * 2);
    // The same chart drawn straight into a pixmap, as exports did before.
    plab::ui::LossChart chart;
    chart.resize(loss.size);
    chart.showRuns(runs);
    chart.resetView();
    const QImage direct = chart.toPixmap(loss.size.width(), loss.size.height(), 2.0)
                              .toImage()
                              .convertToFormat(QImage::Format_ARGB32_Premultiplied);
    QCOMPARE(direct.size(), loss.image.size());
    int differing = 0, inked = 0;
    for (int y = 0; y < direct.height(); ++y)
      for (int x = 0; x < direct.width(); ++x) {
        differing += direct.pixel(x, y) != loss.image.pixel(x, y);
        inked += loss.image.pixel(x, y) != qRgb(255, 255, 255);
      }
    QVERIFY2(inked > direct.width() * direct.height() / 100, "the rasterized chart is blank");
    // Glyph edges may antialias differently when replayed; curves and axes
    // do not (measured: 6,933 of 2.24 M pixels for a 6-run loss chart).
    QVERIFY2(differing < direct.width() * direct.height() / 100, qPrintable(QString::number(differing)));
  }

  void unwritableDestinationsThrowIoError() {
    QTemporaryDir dir;
    // A regular file where a folder should be: fails even for root.
    const QString file = dir.filePath("not-a-folder");
    QFile f(file);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("x");
    f.close();
    QVERIFY_THROWS_EXCEPTION(plab::IoError,
                             plab::ui::writePdfReport({syntheticRecord(false)}, file + "/report.pdf", "x"));
    QVERIFY_THROWS_EXCEPTION(plab::IoError, plab::ui::writeChartPngs({syntheticRecord(false)}, file + "/charts"));
    try {
      plab::ui::writePdfReport({syntheticRecord(false)}, file + "/report.pdf", "x");
    } catch (const plab::IoError& e) {
      QVERIFY(QString(e.what()).contains("report.pdf"));  // names the file
    }
  }
};

PLAB_TEST_MAIN(TestQtReport)
}  // namespace test_qt_report
#include "test_qt_report.moc"
