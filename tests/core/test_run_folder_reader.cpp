// Run folders read back from disk (report/run_folder_reader.h): finished,
// killed (no summary.json, torn last line), sweeps and workspaces, and the
// display side file that renames a run without touching its metrics.
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "report/run_folder_reader.h"
#include "support/hostile_files.h"
#include "support/run_folders.h"
#include "support/test_registry.h"
#include "util/errors.h"

namespace test_run_folder_reader {

using namespace plab;
namespace fs = std::filesystem;

namespace {

using plab::test::namedConfig;

// The crafted files of issue 19: each makes the run unreadable (or its
// display ignored) with a reason, quickly, without a crash or a hang.
void notUtf8(const fs::path& file) {
  fs::remove(file);
  std::ofstream(file) << "{\"name\": \"\xff\xfe\"}";
}

// What readRunFolder said, or "" when it read the run.
std::string readProblem(const fs::path& dir) {
  try {
    readRunFolder(dir);
    return {};
  } catch (const Error& e) {
    return e.what();
  }
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

  // A folder written before adamw.torch_step existed ran torch's for-loop
  // AdamW: it reads back as that, not as today's default; one that names
  // the key reads back as written.
  void folderWithoutTorchStepReadsAsTheForLoopForm() {
    QTemporaryDir tmp;
    const fs::path dir = test::writeStoredRun(fs::path(tmp.path().toStdString()) / "old",
                                              namedConfig("old", OptimizerMode::Fp32AdamW), 3);
    QVERIFY(readRunFolder(dir).record.config.adamw.torchStep == TorchStep::ModeDefault);
    nlohmann::json config = nlohmann::json::parse(fileText(dir / "config.json"));
    QCOMPARE(config.at("adamw").at("torch_step").get<std::string>(), std::string("default"));
    config.at("adamw").erase("torch_step");
    std::ofstream(dir / "config.json", std::ios::trunc) << config.dump(2);
    QVERIFY(readRunFolder(dir).record.config.adamw.torchStep == TorchStep::ForLoop);
    // The same file as a run config (the CLI's `run`) gets the default.
    QVERIFY(RunConfig::fromJson(config).adamw.torchStep == TorchStep::ModeDefault);
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
    writeRunDisplay(dir, {"stochastic, Monday", true, ""});
    const StoredRun run = readRunFolder(dir);
    QCOMPARE(run.display.name, std::string("stochastic, Monday"));
    QVERIFY(run.display.hidden);
    QCOMPARE(run.record.config.name, std::string("r"));  // the config keeps its name
    QCOMPARE(fileText(dir / "metrics.jsonl"), metrics);
    QCOMPARE(fileText(dir / "config.json"), config);
    QVERIFY(run.record.fp32Reference.empty());

    // The fp32 run chosen by hand as the reference, by folder name, reaches the record.
    RunDisplay chosen;
    chosen.name = "r";
    chosen.fp32Reference = "run4-fp32";
    writeRunDisplay(dir, chosen);
    const StoredRun again = readRunFolder(dir);
    QCOMPARE(again.display.fp32Reference, std::string("run4-fp32"));
    QCOMPARE(again.record.fp32Reference, std::string("run4-fp32"));
    QCOMPARE(fileText(dir / "metrics.jsonl"), metrics);
  }

  void hostileFilesMakeTheRunUnreadableNamingFileAndReason() {
    struct Case {
      const char* name;
      void (*make)(const fs::path&);
      const char* reason;
    };
    const Case cases[] = {{"deep nesting", plab::test::writeDeepNesting, "nested deeper than 64"},
                          {"FIFO", plab::test::makeFifo, "FIFO"},
                          {"link to /dev/zero", plab::test::linkToDevZero, "device"},
                          {"300 MB", plab::test::writeSparse300MB, "over the 16 MiB limit"},
                          {"not UTF-8", notUtf8, "not valid UTF-8"}};
    for (const char* file : {"config.json", "summary.json", "run_info.json"}) {
      for (const Case& c : cases) {
        QTemporaryDir tmp;
        const fs::path dir = test::writeStoredRun(fs::path(tmp.path().toStdString()) / "r",
                                                  namedConfig("r", OptimizerMode::Bf16Plain), 3);
        c.make(dir / file);
        QVERIFY(isRunFolder(dir));  // listed, so that it shows as unreadable
        QCOMPARE(findRunFolders(dir.parent_path()).size(), size_t(1));
        QElapsedTimer timer;
        timer.start();
        const std::string problem = readProblem(dir);
        const std::string label = std::string(file) + " " + c.name + ": " + problem;
        QVERIFY2(timer.elapsed() < 5000, label.c_str());
        QVERIFY2(problem.find(file) != std::string::npos, label.c_str());
        QVERIFY2(problem.find(c.reason) != std::string::npos, label.c_str());
      }
    }
  }

  void hostileMetricsFileMakesTheRunUnreadable() {
    for (auto make : {plab::test::makeFifo, plab::test::linkToDevZero}) {
      QTemporaryDir tmp;
      const fs::path dir = test::writeStoredRun(fs::path(tmp.path().toStdString()) / "r",
                                                namedConfig("r", OptimizerMode::Bf16Plain), 3);
      make(dir / "metrics.jsonl");
      QElapsedTimer timer;
      timer.start();
      const std::string problem = readProblem(dir);
      QVERIFY2(timer.elapsed() < 5000, problem.c_str());
      QVERIFY2(problem.find("metrics.jsonl") != std::string::npos, problem.c_str());
      QVERIFY2(problem.find("not a regular file") != std::string::npos, problem.c_str());
    }
  }

  void hostileDisplayFileIsIgnoredAndKept() {
    for (auto make : {plab::test::writeDeepNesting, plab::test::makeFifo, plab::test::linkToDevZero,
                      plab::test::writeSparse300MB, notUtf8}) {
      QTemporaryDir tmp;
      const fs::path dir = test::writeStoredRun(fs::path(tmp.path().toStdString()) / "r",
                                                namedConfig("r", OptimizerMode::Bf16Plain), 3);
      make(dir / kRunDisplayFileName);
      QElapsedTimer timer;
      timer.start();
      const StoredRun run = readRunFolder(dir);
      QVERIFY(timer.elapsed() < 5000);
      QCOMPARE(run.display.name, std::string());
      QVERIFY2(run.displayProblem.find("display.json") != std::string::npos, run.displayProblem.c_str());
      QCOMPARE(run.record.steps.size(), size_t(3));
      QVERIFY(fs::exists(fs::symlink_status(dir / kRunDisplayFileName)));  // nothing removed
    }
  }

  void tornMetricsLinesAreSkippedAndCounted() {
    QTemporaryDir tmp;
    const fs::path dir = test::writeStoredRun(fs::path(tmp.path().toStdString()) / "r",
                                              namedConfig("r", OptimizerMode::Bf16Plain), 3);
    const std::string lines = fileText(dir / "metrics.jsonl");
    // Torn first line, a fragment glued in the middle, a torn last line.
    const size_t second = lines.find('\n') + 1;
    std::ofstream(dir / "metrics.jsonl", std::ios::trunc)
        << "{\"step\": 1, \"lo\n"
        << lines.substr(0, second) << "{\"st" << lines.substr(second) << "{\"step\": 9";
    const StoredRun run = readRunFolder(dir);
    QCOMPARE(run.record.steps.size(), size_t(2));  // steps 1 and 3; step 2 was glued to a fragment
    QCOMPARE(run.metricsLinesSkipped, size_t(2));  // the torn last line is a killed run's normal end
  }

  void metricsLineOverOneMiBIsSkipped() {
    QTemporaryDir tmp;
    const fs::path dir = test::writeStoredRun(fs::path(tmp.path().toStdString()) / "r",
                                              namedConfig("r", OptimizerMode::Bf16Plain), 3);
    const std::string lines = fileText(dir / "metrics.jsonl");
    std::ofstream(dir / "metrics.jsonl", std::ios::trunc) << std::string(3 << 20, ' ') << "{}\n" << lines;
    const StoredRun run = readRunFolder(dir);
    QCOMPARE(run.record.steps.size(), size_t(3));
    QCOMPARE(run.metricsLinesSkipped, size_t(1));
  }
};

PLAB_TEST_APPLESS_MAIN(TestRunFolderReader)
}  // namespace test_run_folder_reader
#include "test_run_folder_reader.moc"
