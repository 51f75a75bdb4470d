// Issue 11 item 4: the GUI export runs in the background. exportReportTo
// returns at once, the event loop keeps running while the report is
// written, and every file is there when exportFinished arrives.
// Set PLAB_REPORT_SAMPLE_DIR to keep the 7-run report (to look at the PDF).
#include <QElapsedTimer>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest/QtTest>

#include <filesystem>

#include "main_window.h"
#include "support/run_folders.h"

using namespace plab::ui;
namespace fs = std::filesystem;

namespace {

// The seven runs of "Compare all modes" plus a second bf16 run that failed.
void writeSevenRuns(const fs::path& workspace) {
  const std::pair<const char*, plab::OptimizerMode> runs[] = {
      {"fp32", plab::OptimizerMode::Fp32AdamW},          {"bf16", plab::OptimizerMode::Bf16Plain},
      {"bf16-nearest", plab::OptimizerMode::Bf16Nearest}, {"bf16-kahan", plab::OptimizerMode::Bf16Kahan},
      {"bf16-sr", plab::OptimizerMode::Bf16StochasticRounding},
      {"mixed", plab::OptimizerMode::Fp32MasterWeights},  {"bf16-nan", plab::OptimizerMode::Bf16Plain}};
  int i = 0;
  for (const auto& [name, mode] : runs) {
    plab::RunConfig c = plab::defaultRunConfig();
    c.name = std::string("tiny-gpt2-") + name;
    c.mode = mode;
    c.steps = 200;
    const bool failed = std::string(name) == "bf16-nan";
    ++i;
    plab::test::writeStoredRun(workspace / (c.name + "-20250101-00000" + std::to_string(i)), c, failed ? 120 : 200,
                               failed ? "failed" : "completed", 0.01 * i);
  }
}

bool fileNonEmpty(const QString& path) { return QFile(path).size() > 0; }

}  // namespace

class TestReportExport : public QObject {
  Q_OBJECT
 private slots:
  void exportRunsInTheBackground() {
    QTemporaryDir workspace;
    writeSevenRuns(fs::path(workspace.path().toStdString()));
    MainWindow w(workspace.path());
    QCOMPARE(w.store()->size(), 7);

    QTemporaryDir out;
    const QString sample = qEnvironmentVariable("PLAB_REPORT_SAMPLE_DIR");
    const QString dir = sample.isEmpty() ? out.filePath("report") : sample;
    int ticks = 0;  // event-loop turns while the export runs
    QTimer ticker;
    connect(&ticker, &QTimer::timeout, [&] { ++ticks; });
    ticker.start(5);
    QSignalSpy finished(&w, &MainWindow::exportFinished);

    QElapsedTimer clock;
    clock.start();
    QVERIFY(w.exportReportTo(dir));
    QVERIFY2(clock.elapsed() < 250, qPrintable(QString("exportReportTo took %1 ms").arg(clock.elapsed())));
    QVERIFY(w.exporting());
    QVERIFY(!w.exportReportTo(dir));  // one at a time
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 120000);
    qInfo("export took %lld ms, %d event-loop turns meanwhile", static_cast<long long>(clock.elapsed()), ticks);
    QVERIFY(ticks > 3);
    QCOMPARE(finished.at(0).at(1).toBool(), true);
    QVERIFY(!w.exporting());
    for (const char* name : {"report.html", "summary.csv", "report.pdf", "loss.png", "loss_vs_fp32.png", "memory.png",
                             "update_lost.png", "rounded_away.png", "layers_heatmap_tiny-gpt2-fp32.png"})
      QVERIFY2(fileNonEmpty(dir + "/" + name), name);
  }

  void failedExportIsReported() {
    QTemporaryDir workspace;
    writeSevenRuns(fs::path(workspace.path().toStdString()));
    MainWindow w(workspace.path());
    QTemporaryDir out;
    const QString blocker = out.filePath("blocker");
    QFile f(blocker);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("x");
    f.close();
    QSignalSpy finished(&w, &MainWindow::exportFinished);
    QVERIFY(w.exportReportTo(blocker + "/report"));
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 120000);
    QCOMPARE(finished.at(0).at(1).toBool(), false);
    QVERIFY(w.lastError().contains("blocker"));
  }
};

QTEST_MAIN(TestReportExport)
#include "test_report_export.moc"
