// Run folders read back from disk (report/run_folder_reader.h): finished,
// killed (no summary.json, torn last line), sweeps and workspaces, and the
// display side file that renames a run without touching its metrics.
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <fstream>
#include <sstream>

#include "report/run_folder_reader.h"
#include "support/run_folders.h"
#include "util/errors.h"

using namespace plab;
namespace fs = std::filesystem;

namespace {

RunConfig namedConfig(const std::string& name, OptimizerMode mode) {
  RunConfig c = defaultRunConfig();
  c.name = name;
  c.mode = mode;
  return c;
}

std::string fileText(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

class TestRunFolderReader : public QObject {
  Q_OBJECT
 private slots:
  void completedRunReadsBackAsWritten() {
    QTemporaryDir tmp;
    const fs::path dir = test::writeStoredRun(fs::path(tmp.path().toStdString()) / "a",
                                              namedConfig("a", OptimizerMode::Fp32AdamW), 6);
    QVERIFY(isRunFolder(dir));
    const StoredRun run = readRunFolder(dir);
    QCOMPARE(run.status, StoredRunStatus::Completed);
    QCOMPARE(run.record.config.name, std::string("a"));
    QCOMPARE(run.record.config.mode, OptimizerMode::Fp32AdamW);
    QCOMPARE(run.record.config.output_dir, dir.string());
    QCOMPARE(run.record.steps.size(), size_t(6));
    QCOMPARE(run.record.steps[2].loss, test::storedStep(3, 0).loss);
    QVERIFY(run.record.steps[1].valLoss.has_value());
    QCOMPARE(run.record.steps[0].layers.size(), size_t(2));
    QCOMPARE(run.record.info.parameterCount, int64_t(1 << 20));
    QCOMPARE(run.record.info.layers.size(), size_t(2));
    QCOMPARE(run.record.result.stepsDone, int64_t(6));
    QCOMPARE(run.record.result.status, RunStatus::Completed);
    QCOMPARE(run.record.result.stepPeakBytes.value_or(-1), int64_t(3 << 20));
    QVERIFY(run.startedAt > 0);
  }

  void killedRunIsIncompleteAndSkipsTheTornLine() {
    QTemporaryDir tmp;
    const fs::path dir =
        test::writeStoredRun(fs::path(tmp.path().toStdString()) / "k", namedConfig("k", OptimizerMode::Bf16Plain), 4, "");
    test::appendTornLine(dir);
    const StoredRun run = readRunFolder(dir);
    QCOMPARE(run.status, StoredRunStatus::Incomplete);
    QCOMPARE(storedRunStatusId(run.status), std::string("incomplete"));
    QCOMPARE(run.record.steps.size(), size_t(4));
    QCOMPARE(run.record.result.stepsDone, int64_t(4));
    QCOMPARE(run.record.result.finalLoss, run.record.steps.back().loss);

    // A torn summary.json (killed while replacing it) also reads as incomplete.
    std::ofstream(dir / "summary.json") << "{\"status\": \"compl";
    QCOMPARE(readRunFolder(dir).status, StoredRunStatus::Incomplete);
  }

  void failedRunKeepsItsMessage() {
    QTemporaryDir tmp;
    const fs::path dir = test::writeStoredRun(fs::path(tmp.path().toStdString()) / "f",
                                              namedConfig("f", OptimizerMode::Bf16Kahan), 2, "failed");
    const StoredRun run = readRunFolder(dir);
    QCOMPARE(run.status, StoredRunStatus::Failed);
    QCOMPARE(run.record.result.status, RunStatus::Failed);
  }

  void brokenConfigIsAnErrorNamingTheFile() {
    QTemporaryDir tmp;
    const fs::path dir = fs::path(tmp.path().toStdString()) / "b";
    fs::create_directories(dir);
    std::ofstream(dir / "config.json") << "{\"name\": 3}";
    std::ofstream(dir / "metrics.jsonl") << "";
    QVERIFY(isRunFolder(dir));
    try {
      readRunFolder(dir);
      QFAIL("expected ConfigError");
    } catch (const ConfigError& e) {
      QVERIFY2(std::string(e.what()).find("config.json") != std::string::npos, e.what());
    }
  }

  void findsRunsOfAFolderASweepAndAWorkspace() {
    QTemporaryDir tmp;
    const fs::path root(tmp.path().toStdString());
    const fs::path single = test::writeStoredRun(root / "ws" / "run1-fp32-20250101-000000",
                                                 namedConfig("run1-fp32", OptimizerMode::Fp32AdamW), 2);
    const fs::path sweep = root / "ws" / "sweep";
    test::writeStoredRun(sweep / "runs" / "x-fp32", namedConfig("x-fp32", OptimizerMode::Fp32AdamW), 2);
    test::writeStoredRun(sweep / "runs" / "x-bf16", namedConfig("x-bf16", OptimizerMode::Bf16Plain), 2);
    fs::create_directories(root / "ws" / "empty-folder");  // a run that never wrote anything

    QCOMPARE(findRunFolders(single), std::vector<fs::path>{single});
    QCOMPARE(findRunFolders(sweep).size(), size_t(2));
    const auto all = findRunFolders(root / "ws");
    QCOMPARE(all.size(), size_t(3));
    QVERIFY(findRunFolders(root / "nowhere").empty());
  }

  void displayFileRenamesWithoutTouchingMetrics() {
    QTemporaryDir tmp;
    const fs::path dir = test::writeStoredRun(fs::path(tmp.path().toStdString()) / "r",
                                              namedConfig("r", OptimizerMode::Bf16StochasticRounding), 3);
    const std::string metrics = fileText(dir / "metrics.jsonl");
    const std::string config = fileText(dir / "config.json");
    QCOMPARE(readRunDisplay(dir).name, std::string());
    writeRunDisplay(dir, {"stochastic, Monday", true});
    const StoredRun run = readRunFolder(dir);
    QCOMPARE(run.display.name, std::string("stochastic, Monday"));
    QVERIFY(run.display.hidden);
    QCOMPARE(run.record.config.name, std::string("r"));  // the config keeps its name
    QCOMPARE(fileText(dir / "metrics.jsonl"), metrics);
    QCOMPARE(fileText(dir / "config.json"), config);
  }
};

QTEST_APPLESS_MAIN(TestRunFolderReader)
#include "test_run_folder_reader.moc"
