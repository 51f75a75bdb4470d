// Issue 11 item 4: the GUI export runs in the background. exportReportTo
// returns at once, the event loop keeps running while the report is
// written, and every file is there when exportFinished arrives.
// Set PLAB_REPORT_SAMPLE_DIR to keep the 7-run report (to look at the PDF).
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProgressDialog>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest/QtTest>

#include <cmath>
#include <filesystem>

#include "main_window.h"
#include "window_waits.h"
#include "support/run_folders.h"
#include "support/test_registry.h"
#include "train/metrics_writer.h"
#include "util/atomic_file.h"

namespace test_report_export {

using namespace plab::ui;
namespace fs = std::filesystem;

namespace {

// A run folder as the trainer writes it, with the shape of a real
// comparison: per-mode loss offsets, windowed update lost, 12 layers.
void writeRun(const fs::path& dir, const std::string& name, plab::OptimizerMode mode, int steps, double offset,
              double lost, bool failed) {
  plab::RunConfig c = plab::defaultRunConfig();
  c.name = name;
  c.mode = mode;
  c.steps = 200;
  c.output_dir = dir.string();
  fs::create_directories(dir);
  plab::writeJsonFileAtomically(dir / "config.json", c.toJson());
  plab::RunInfo info;
  info.runName = name;
  info.device = "cpu";
  info.modelType = "gpt2";
  info.parameterCount = 1 << 20;
  info.tokensPerStep = 256;
  for (int l = 0; l < 12; ++l) info.layers.push_back("transformer.h." + std::to_string(l / 4) + ".layer" + std::to_string(l));
  info.fp32Baseline = plab::fp32AdamWBaseline(info.parameterCount);
  info.optimizerMode = plab::optimizerModeId(mode);
  plab::writeJsonFileAtomically(dir / "run_info.json", plab::toJson(info));
  plab::StepMetrics last;
  {
    plab::MetricsWriter writer(dir);
    for (int s = 1; s <= steps; ++s) {
      plab::StepMetrics m = plab::test::storedStep(s, offset * (1 - std::exp(-0.02 * s)));
      m.layers.clear();
      for (size_t l = 0; l < info.layers.size(); ++l) m.layers.push_back({info.layers[l], lost * (0.3 + 0.05 * l), 0.9});
      if (s % 20 == 0) {
        m.updateLost = lost;
        for (size_t l = 0; l < info.layers.size(); ++l)
          m.windowLayers.push_back({info.layers[l], std::min(1.0, lost * (0.4 + 0.1 * l)), lost});
      }
      writer.write(m);
      last = m;
    }
  }
  plab::RunResult r;
  r.status = failed ? plab::RunStatus::Failed : plab::RunStatus::Completed;
  r.message = failed ? "loss became NaN at step 121" : "";
  r.stepsDone = steps;
  r.finalLoss = last.loss;
  r.finalValLoss = last.loss + 0.1;
  r.meanTokensPerSecond = 500;
  r.memory = last.memory;
  r.memorySavedFraction = 0.5;
  r.meanUpdateLost = lost;
  r.meanRoundedAwayFraction = lost * 0.5;
  plab::writeJsonFileAtomically(dir / "summary.json", plab::toJson(r));
}

// The runs of "Compare all modes" plus a second bf16 run that failed.
void writeSevenRuns(const fs::path& workspace) {
  struct Run {
    const char* name;
    plab::OptimizerMode mode;
    double offset, lost;
  };
  const Run runs[] = {{"fp32", plab::OptimizerMode::Fp32AdamW, 0, 0},
                      {"bf16", plab::OptimizerMode::Bf16Plain, 0.06, 0.88},
                      {"bf16-nearest", plab::OptimizerMode::Bf16Nearest, 0.0592, 0.86},
                      {"bf16-kahan", plab::OptimizerMode::Bf16Kahan, 0.0008, 0.02},
                      {"bf16-sr", plab::OptimizerMode::Bf16StochasticRounding, 0.0021, 0.05},
                      {"mixed", plab::OptimizerMode::Fp32MasterWeights, 0, 0},
                      {"bf16-nan", plab::OptimizerMode::Bf16Plain, 0.07, 0.9}};
  int i = 0;
  for (const Run& r : runs) {
    const bool failed = std::string(r.name) == "bf16-nan";
    const std::string name = std::string("tiny-gpt2-finetune-") + r.name;
    writeRun(workspace / (name + "-20250101-00000" + std::to_string(i++)), name, r.mode, failed ? 120 : 200, r.offset,
             r.lost, failed);
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
    QVERIFY(plab::test::waitForRuns(w));
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
                             "update_lost.png", "rounded_away.png", "layers_heatmap_tiny-gpt2-finetune-fp32.png"})
      QVERIFY2(fileNonEmpty(dir + "/" + name), name);
    // Written under a hidden folder and renamed into place: none is left.
    QVERIFY(QDir(dir).entryList(QDir::Hidden | QDir::AllEntries | QDir::NoDotAndDotDot).filter(".qt-report-tmp").isEmpty());
  }

  void cancelStopsWithoutAnErrorBox() {
    QTemporaryDir workspace;
    writeSevenRuns(fs::path(workspace.path().toStdString()));
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    QTemporaryDir out;
    QSignalSpy finished(&w, &MainWindow::exportFinished);
    QVERIFY(w.exportReportTo(out.filePath("report")));
    auto* progress = w.findChild<QProgressDialog*>("exportProgress");
    QVERIFY(progress);
    emit progress->canceled();  // what its Cancel button sends
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 120000);
    QCOMPARE(finished.at(0).at(1).toBool(), false);
    QVERIFY(w.lastError().isEmpty());
    QVERIFY(!QFile::exists(out.filePath("report/report.pdf")));
    QVERIFY(w.exportReportTo(out.filePath("again")));  // and the next export runs
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 120000);
    QCOMPARE(finished.at(1).at(1).toBool(), true);
  }

  void failedExportIsReported() {
    QTemporaryDir workspace;
    writeSevenRuns(fs::path(workspace.path().toStdString()));
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
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

PLAB_TEST_MAIN(TestReportExport)
}  // namespace test_report_export
#include "test_report_export.moc"
