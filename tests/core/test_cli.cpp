// The precision-lab-cli executable, run as a user would (path in $PLAB_CLI).
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "report/run_folder_reader.h"
#include "report/run_order.h"
#include "support/test_registry.h"
#include "train/metrics_writer.h"
#include "train/run_config.h"
#include "util/utc_time.h"

namespace test_cli {

using namespace plab;
namespace fs = std::filesystem;

namespace {

struct Outcome {
  int exitCode = -1;
  QString out, err;
};

Outcome runCli(const QStringList& args, int timeoutMs = 120000,
              const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment()) {
  QProcess p;
  p.setProcessEnvironment(env);
  p.start(qEnvironmentVariable("PLAB_CLI"), args);
  Outcome o;
  if (!p.waitForStarted(10000)) {
    o.err = "cannot start " + qEnvironmentVariable("PLAB_CLI");
    return o;
  }
  if (!p.waitForFinished(timeoutMs)) {
    p.kill();
    p.waitForFinished();
  }
  o.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
  o.out = QString::fromUtf8(p.readAllStandardOutput());
  o.err = QString::fromUtf8(p.readAllStandardError());
  return o;
}

QByteArray describe(const Outcome& o) {
  return ("exit " + QString::number(o.exitCode) + "\nstdout: " + o.out + "\nstderr: " + o.err).toUtf8();
}

}  // namespace

class TestCli : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    if (qEnvironmentVariableIsEmpty("PLAB_CLI")) QSKIP("PLAB_CLI not set (run through ctest)");
  }

  void helpListsEverything() {
    const Outcome o = runCli({"--help"});
    QCOMPARE(o.exitCode, 0);
    for (const char* cmd : {"run", "default-config", "inspect", "cache", "download", "bench", "memory", "--no-pdf", "--out"})
      QVERIFY2(o.out.contains(cmd), cmd);
    for (const char* cmd : {"run", "default-config", "inspect", "cache", "download", "bench", "memory"}) {
      const Outcome h = runCli({cmd, "--help"});
      QVERIFY2(h.exitCode == 0 && h.out.contains("usage: precision-lab-cli"), describe(h));
    }
  }

  // Every process of the tool asks MKL for run-to-run determinism under
  // threads (core/train/torch_runtime.h): the AUTO branch and a fixed thread
  // count, unless the environment chose otherwise. --version sets no thread
  // count (which would turn MKL's dynamic threading off on its own), so a
  // process left with dynamic threads shows here.
  void versionReportsDeterministicMkl() {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char* name : {"MKL_CBWR", "MKL_DYNAMIC", "OMP_DYNAMIC", "OMP_NUM_THREADS"}) env.remove(name);
    const Outcome o = runCli({"--version"}, 120000, env);
    QVERIFY2(o.exitCode == 0, describe(o));
    if (!o.out.contains("MKL branch")) QSKIP("LibTorch without MKL");
    QVERIFY2(o.out.contains("MKL branch AUTO,") && !o.out.contains("dynamic threads"), describe(o));
    // A user's own setting is kept, and reported.
    env.insert("MKL_DYNAMIC", "TRUE");
    const Outcome dynamic = runCli({"--version"}, 120000, env);
    QVERIFY2(dynamic.out.contains("MKL branch AUTO, dynamic threads"), describe(dynamic));
  }

  // `memory` projects from the config: every rank holds the weights and
  // gradients, the optimizer state adds up over the ranks to one process's
  // (the projection against measured ranks is in test_distributed).
  void memoryProjectsPerRank() {
    const Outcome o = runCli({"memory", "embedded", "--nproc", "1,3", "--mode", "mixed", "--json"});
    QVERIFY2(o.exitCode == 0, describe(o));
    const nlohmann::json j = nlohmann::json::parse(o.out.toStdString());
    QCOMPARE(j["projections"].size(), size_t(2));
    const nlohmann::json& one = j["projections"][0]["rank_memory"][0];
    const auto state = [](const nlohmann::json& m) {
      return m["moments"].get<int64_t>() + m["master"].get<int64_t>() + m["kahan"].get<int64_t>();
    };
    QVERIFY(one["master"].get<int64_t>() > 0);
    int64_t sum = 0;
    for (const nlohmann::json& rank : j["projections"][1]["rank_memory"]) {
      QCOMPARE(rank["weights"], one["weights"]);
      QCOMPARE(rank["gradients"], one["gradients"]);
      QVERIFY(state(rank) < state(one) / 2);
      sum += state(rank);
    }
    QCOMPARE(sum, state(one));
    const Outcome table = runCli({"memory", "embedded", "--nproc", "8"});
    QVERIFY2(table.exitCode == 0 && table.out.contains("bf16-kahan") && table.out.contains("total/rank"), describe(table));
    const Outcome bad = runCli({"memory", "embedded", "--nproc", "0"});
    QVERIFY2(bad.exitCode == 2 && bad.err.contains("--nproc"), describe(bad));
  }

  void usageErrors() {
    const Outcome unknown = runCli({"frobnicate"});
    QCOMPARE(unknown.exitCode, 2);
    QVERIFY(unknown.err.contains("error:"));
    const Outcome noConfig = runCli({"run"});
    QCOMPARE(noConfig.exitCode, 2);
    const Outcome badOption = runCli({"run", "--default", "--stepz", "3"});
    QVERIFY2(badOption.exitCode == 2 && badOption.err.contains("--stepz"), describe(badOption));
    const Outcome badSteps = runCli({"run", "--default", "--steps", "many"});
    QCOMPARE(badSteps.exitCode, 2);
  }

  void defaultConfigIsAValidRunConfig() {
    const Outcome o = runCli({"default-config"});
    QCOMPARE(o.exitCode, 0);
    const RunConfig c = RunConfig::fromJson(nlohmann::json::parse(o.out.toStdString()));
    QCOMPARE(c.toJson(), defaultRunConfig().toJson());
  }

  void runDefaultWritesReport() {
    QTemporaryDir tmp;
    const fs::path out = fs::path(tmp.path().toStdString()) / "report";
    const Outcome o = runCli({"run", "--default", "--mode", "bf16-kahan", "--steps", "3", "--out",
                              QString::fromStdString(out.string()), "--no-pdf"});
    QVERIFY2(o.exitCode == 0, describe(o));
    for (const char* f : {"config.json", "run_info.json", "summary.json", "metrics.jsonl", "metrics.csv", "layers.csv",
                          "report.html", "charts/loss.svg"})
      QVERIFY2(fs::is_regular_file(out / f), f);
    QCOMPARE(readMetricsJsonl(out / "metrics.jsonl").size(), size_t(3));
    std::ifstream cfg(out / "config.json");
    QCOMPARE(RunConfig::fromJson(nlohmann::json::parse(cfg)).steps, int64_t(3));
    QVERIFY(o.out.contains("report:"));
    QVERIFY(o.err.contains("step 3/3"));  // progress (plain lines: stderr is a pipe)
  }

  // Without --mode the default run is the comparison of every mode, with a
  // verdict per run against fp32.
  void defaultExperimentComparesEveryMode() {
    QTemporaryDir tmp;
    const fs::path out = fs::path(tmp.path().toStdString()) / "experiment";
    const Outcome o = runCli({"run", "--default", "--steps", "2", "--out", QString::fromStdString(out.string()),
                              "--no-pdf"});
    QVERIFY2(o.exitCode == 0, describe(o));
    QVERIFY(fs::exists(out / "summary.csv"));
    for (OptimizerMode m : allOptimizerModes()) {
      const std::string run = "tiny-gpt2-finetune-" + optimizerModeId(m);
      QVERIFY2(fs::exists(out / "runs" / run / "metrics.jsonl"), run.c_str());
      QVERIFY2(o.out.contains(QString::fromStdString("  " + run + ": " + optimizerModeId(m) + ": ")), describe(o));
    }
    QVERIFY2(o.out.contains("nats val loss vs fp32"), describe(o));
    QVERIFY2(o.out.contains("tiny-gpt2-finetune-fp32: fp32: the fp32 reference"), describe(o));
    // Kahan and SR again on fp32 moments: what splits their gap (report/paired_gap.h).
    for (const char* run : {"tiny-gpt2-finetune-bf16-kahan-fp32-moments", "tiny-gpt2-finetune-bf16-sr-fp32-moments"}) {
      QVERIFY2(fs::exists(out / "runs" / run / "metrics.jsonl"), run);
      const RunConfig c = RunConfig::fromJson(nlohmann::json::parse(std::ifstream(out / "runs" / run / "config.json")));
      QVERIFY(c.adamw.moments == MomentPrecision::Fp32);
    }
  }

  // With mixed and the recipe on fp32 moments over the same seeds, the
  // verdict splits the recipe's gap into compute, weight write and moments.
  void seedsWithFp32MomentRunsSplitTheGap() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    // 4 steps with 2-step windows: the runs record update lost and noise, which the write part shows.
    std::ofstream(dir / "runs.json") << R"({"runs": [
        {"name": "p-fp32", "mode": "fp32", "steps": 4, "update_window": 2, "seq_len": 16, "batch_size": 2, "eval_batches": 1, "threads": 1},
        {"name": "p-mixed", "mode": "mixed", "steps": 4, "update_window": 2, "seq_len": 16, "batch_size": 2, "eval_batches": 1, "threads": 1},
        {"name": "p-kahan", "mode": "bf16-kahan", "steps": 4, "update_window": 2, "seq_len": 16, "batch_size": 2, "eval_batches": 1, "threads": 1},
        {"name": "p-kahan-m", "mode": "bf16-kahan", "adamw": {"moments": "fp32"}, "steps": 4, "update_window": 2, "seq_len": 16,
         "batch_size": 2, "eval_batches": 1, "threads": 1}]})";
    const Outcome o = runCli({"run", QString::fromStdString((dir / "runs.json").string()), "--seeds", "3-4", "--out",
                              QString::fromStdString((dir / "out").string()), "--no-pdf"});
    QVERIFY2(o.exitCode == 0, describe(o));
    QVERIFY2(o.out.contains("over 2 seeds with mixed and fp32-moment runs ") && o.out.contains(" = compute ") &&
                 o.out.contains(" + weight write ") && o.out.contains("update noise") && o.out.contains(" + moments "),
             describe(o));
    // The report states the same split.
    std::stringstream html;
    html << std::ifstream(dir / "out" / "report.html").rdbuf();
    QVERIFY(html.str().find("with mixed and fp32-moment runs") != std::string::npos &&
            html.str().find(" + weight write ") != std::string::npos);
  }

  // --seeds repeats every run per seed; each seed's run is measured against
  // its own seed's fp32 twin, and the verdict tests the gap paired over seeds.
  void seedsGiveAPairedVerdict() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    std::ofstream(dir / "sweep.json") << R"({"base": {"name": "p", "steps": 2, "seq_len": 16, "batch_size": 2,
        "eval_batches": 1, "threads": 1}, "sweep": {"mode": ["fp32", "bf16"]}})";
    const Outcome o = runCli({"run", QString::fromStdString((dir / "sweep.json").string()), "--seeds", "3-4,9",
                              "--out", QString::fromStdString((dir / "out").string()), "--no-pdf"});
    QVERIFY2(o.exitCode == 0, describe(o));
    for (const char* run : {"p-fp32-s3", "p-bf16-s3", "p-fp32-s4", "p-bf16-s4", "p-fp32-s9", "p-bf16-s9"})
      QVERIFY2(fs::exists(dir / "out" / "runs" / run / "metrics.jsonl"), run);
    QVERIFY2(o.out.contains("p-bf16-s4: bf16: ") && o.out.contains("vs fp32 twin p-fp32-s4"), describe(o));
    QVERIFY2(o.out.contains("over 3 seeds"), describe(o));
    for (const char* bad : {"4-3", "x", "1,1", "0-100", ""}) {
      const Outcome e = runCli({"run", QString::fromStdString((dir / "sweep.json").string()), "--seeds", bad, "--out",
                                QString::fromStdString((dir / "bad").string()), "--no-pdf"});
      QVERIFY2(e.exitCode == 2 && e.err.contains("--seeds"), describe(e));
    }
  }

  // The PNG/PDF step needs no display: with DISPLAY naming an X server that
  // is not there, Qt aborted after training (exit 134).
  void reportRendersWithAMissingDisplay() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    const QByteArray platform = qgetenv("QT_QPA_PLATFORM"), display = qgetenv("DISPLAY");
    qunsetenv("QT_QPA_PLATFORM");
    qputenv("DISPLAY", ":97");  // no X server there
    const Outcome o = runCli({"run", "--default", "--mode", "bf16", "--steps", "1", "--out",
                              QString::fromStdString((dir / "out").string())});
    qputenv("QT_QPA_PLATFORM", platform);
    if (display.isEmpty()) qunsetenv("DISPLAY");
    else qputenv("DISPLAY", display);
    QVERIFY2(o.exitCode == 0, describe(o));
    QVERIFY(fs::exists(dir / "out" / "report.pdf"));
  }

  // run --resume continues a run from its checkpoint into a new folder.
  void resumeFromACheckpoint() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    std::ofstream(dir / "run.json") << R"({"name": "r", "steps": 4, "seq_len": 16, "batch_size": 2,
        "eval_batches": 1, "checkpoint_every": 2, "mode": "bf16-sr"})";
    const Outcome first = runCli({"run", QString::fromStdString((dir / "run.json").string()), "--out",
                                  QString::fromStdString((dir / "a").string()), "--no-pdf"});
    QVERIFY2(first.exitCode == 0, describe(first));
    const Outcome resumed = runCli({"run", "--resume", QString::fromStdString((dir / "a" / "checkpoint-2").string()),
                                    "--out", QString::fromStdString((dir / "b").string()), "--no-pdf"});
    QVERIFY2(resumed.exitCode == 0 && resumed.err.contains("resuming from"), describe(resumed));
    // Another mode would drop the checkpoint's optimizer state: refused, nothing trained.
    const Outcome switched = runCli({"run", "--resume", QString::fromStdString((dir / "a" / "checkpoint-2").string()),
                                     "--mode", "bf16-kahan", "--out", QString::fromStdString((dir / "c").string()),
                                     "--no-pdf"});
    QVERIFY2(switched.exitCode == 2 && switched.err.contains("trained in mode bf16-sr"), describe(switched));
    QVERIFY(!fs::exists(dir / "c" / "metrics.jsonl"));
    const auto steps = readMetricsJsonl(dir / "b" / "metrics.jsonl");
    QCOMPARE(steps.size(), size_t(2));
    QCOMPARE(steps.front().step, int64_t(3));
    const Outcome both = runCli({"run", "--resume", "x", "--default"});
    QCOMPARE(both.exitCode, 2);
  }

  void sweepWritesComparison() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    std::ofstream(dir / "sweep.json") << R"({"base": {"name": "sw", "steps": 2, "seq_len": 16, "batch_size": 2,
        "eval_batches": 1}, "sweep": {"mode": ["fp32", "bf16"]}})";
    const Outcome o = runCli({"run", QString::fromStdString((dir / "sweep.json").string()), "--out",
                              QString::fromStdString((dir / "out").string()), "--no-pdf"});
    QVERIFY2(o.exitCode == 0, describe(o));
    QVERIFY(fs::exists(dir / "out" / "summary.csv"));
    QVERIFY(fs::exists(dir / "out" / "report.html"));
    QCOMPARE(readMetricsJsonl(dir / "out" / "runs" / "sw-bf16" / "metrics.jsonl").size(), size_t(2));
    // Each run records when it started (run_info.json's started_at), so the
    // sweep's runs keep their order (fp32 trained first) when opened, though
    // their folder names carry no stamp and sort the other way.
    std::vector<RunRecord> runs;
    for (const char* name : {"sw-bf16", "sw-fp32"}) {
      runs.push_back(readRunFolder(dir / "out" / "runs" / name).record);
      QVERIFY2(!sortableUtcStamp(runs.back().info.startedAt).empty(), runs.back().info.startedAt.c_str());
    }
    QCOMPARE(report::startOrder(runs), (std::vector<size_t>{1, 0}));
  }

  void brokenConfigIsAUsageError() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    std::ofstream(dir / "broken.json") << "{\"steps\": 3,";
    const Outcome broken = runCli({"run", QString::fromStdString((dir / "broken.json").string())});
    QVERIFY2(broken.exitCode == 2 && broken.err.startsWith("error:") && broken.err.contains("broken.json"),
             describe(broken));
    std::ofstream(dir / "typo.json") << R"({"stepz": 3})";
    const Outcome typo = runCli({"run", QString::fromStdString((dir / "typo.json").string())});
    QVERIFY2(typo.exitCode == 2 && typo.err.contains("stepz"), describe(typo));
    const Outcome missing = runCli({"run", "/nonexistent/run.json"});
    QVERIFY2(missing.exitCode == 2 && missing.err.contains("/nonexistent/run.json"), describe(missing));
  }

  void missingModelFolderFailsClearly() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    std::ofstream(dir / "run.json") << R"({"model": {"source": "folder", "path": "/nonexistent/model-dir"},
        "steps": 2})";
    const Outcome o = runCli({"run", QString::fromStdString((dir / "run.json").string()), "--out",
                              QString::fromStdString((dir / "out").string()), "--no-pdf"});
    QVERIFY2(o.exitCode == 1, describe(o));
    QVERIFY2(o.err.contains("error:") && o.err.contains("/nonexistent/model-dir"), describe(o));
    QVERIFY(fs::exists(dir / "out" / "summary.json"));  // the failed run is still reported

    const Outcome inspect = runCli({"inspect", "/nonexistent/model-dir"});
    QVERIFY2(inspect.exitCode != 0 && inspect.err.contains("error:"), describe(inspect));
  }

  void unwritableOutIsAnError() {
    const Outcome o = runCli({"run", "--default", "--steps", "1", "--out", "/dev/full/out", "--no-pdf"});
    QVERIFY2(o.exitCode != 0 && o.err.contains("error:") && o.err.contains("/dev/full/out"), describe(o));
  }

  void inspectEmbedded() {
    const Outcome o = runCli({"inspect", "embedded"});
    QVERIFY2(o.exitCode == 0, describe(o));
    QVERIFY(o.out.contains("gpt2"));
    QVERIFY(o.out.contains("c_attn"));
  }
};

PLAB_TEST_GUILESS_MAIN(TestCli)
}  // namespace test_cli
#include "test_cli.moc"
