// Every config the tool reads goes through one size-capped reader, and is
// validated when it is read, by the same rules in `run`, `advise` and the
// app (issue 37, points 4 and 7): the real CLI against crafted files and
// arguments, each refused with exit 2 and the field named, quickly, before
// any run folder is made.
#include <QtTest/QtTest>

#include <chrono>
#include <fstream>

#include "report/run_folder_reader.h"
#include "support/cli_process.h"
#include "support/error_capture.h"
#include "support/hostile_files.h"
#include "support/test_registry.h"
#include "train/run_config.h"
#include "train/run_config_model_check.h"
#include "util/errors.h"

namespace test_config_reading {

using namespace plab;
using plab::test::CliOutcome;
using plab::test::errorMessageOf;
using plab::test::mentions;
using plab::test::runCli;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

QString str(const fs::path& p) { return QString::fromStdString(p.string()); }

fs::path writeRun(const fs::path& file, const std::function<void(nlohmann::json&)>& edit) {
  RunConfig c = defaultRunConfig();
  c.steps = 2;
  c.device = "cpu";
  c.threads = 1;
  nlohmann::json j = c.toJson();
  edit(j);
  std::ofstream(file) << j.dump(2);
  return file;
}

// 2 GiB that take no disk: a reader without a cap loads it whole.
fs::path writeSparse2GiB(const fs::path& file) {
  std::ofstream(file) << "{\"model_type\": \"gpt2\", \"x\": \"";
  fs::resize_file(file, 2ull << 30);
  return file;
}

// Exit 2, within `seconds`, with every part of `expected` on stderr.
void expectRefused(const QStringList& args, const QStringList& expected, double seconds = 20) {
  const auto start = Clock::now();
  const CliOutcome o = runCli(args, {}, 60000);
  const double took = std::chrono::duration<double>(Clock::now() - start).count();
  qInfo("%s -> exit %d in %.1f s: %s", qPrintable(args.join(' ').left(100)), o.exitCode, took,
        qPrintable(o.err.trimmed().split('\n').first().left(240)));
  QVERIFY2(o.exitCode == 2, o.describe());
  QVERIFY2(took < seconds, o.describe());
  for (const QString& part : expected) QVERIFY2(o.err.contains(part), o.describe());
}

}  // namespace

class TestConfigReading : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  fs::path dir() const { return tmp_.path().toStdString(); }

 private slots:
  void initTestCase() {
    if (plab::test::cliPath().isEmpty()) QSKIP("PLAB_CLI not set (run through ctest)");
  }

  // Issue 37.4: `inspect BIG.json` reached bad_alloc at 6 GB after 103 s,
  // `memory BIG.json` was still reading at 116 s, `run /dev/zero` reached
  // bad_alloc at 3.96 GB after 45 s.
  void everyConfigFileIsSizeCapped() {
    const fs::path big = writeSparse2GiB(dir() / "BIG.json");
    expectRefused({"inspect", str(big)}, {"BIG.json", "over the 16 MiB limit"}, 10);
    expectRefused({"memory", str(big)}, {"BIG.json", "over the 16 MiB limit"}, 10);
    expectRefused({"run", str(big), "--out", str(dir() / "never")}, {"BIG.json", "over the 16 MiB limit"}, 10);
    expectRefused({"run", "/dev/zero", "--out", str(dir() / "never")}, {"/dev/zero", "is a device, not a regular file"}, 10);
    plab::test::makeFifo(dir() / "fifo.json");
    expectRefused({"run", str(dir() / "fifo.json"), "--out", str(dir() / "never")}, {"FIFO"}, 10);
    // A model argument that is there but no regular file: said what it is ("model not found" before).
    expectRefused({"inspect", str(dir() / "fifo.json")}, {"fifo.json", "is a FIFO"}, 10);
    expectRefused({"memory", "/dev/zero"}, {"/dev/zero", "is a device"}, 10);
    plab::test::writeDeepNesting(dir() / "deep.json");
    expectRefused({"advise", str(dir() / "deep.json"), "--out", str(dir() / "never")}, {"nested deeper"}, 10);
    QVERIFY(!fs::exists(dir() / "never"));
    // The config.json a resume reads beside its checkpoint.
    fs::create_directories(dir() / "old-run" / "checkpoint-2");
    fs::create_symlink("/dev/zero", dir() / "old-run" / "config.json");
    expectRefused({"run", "--resume", str(dir() / "old-run" / "checkpoint-2"), "--out", str(dir() / "never")},
                  {"config.json", "is a device"}, 10);
  }

  // `memory --nproc` with 20,000 counts ran past a minute.
  void listArgumentsAreCapped() {
    QString counts = "1";
    for (int i = 2; i <= 20000; ++i) counts += "," + QString::number(i);
    expectRefused({"memory", "embedded", "--nproc", counts}, {"--nproc: at most 64 process counts"}, 10);
    expectRefused({"run", "--default", "--seeds", counts, "--out", str(dir() / "never")}, {"--seeds: at most 100 seeds"}, 10);
    expectRefused({"advise", "--default", "--seeds", counts, "--out", str(dir() / "never")}, {"--seeds: at most 20 seeds"}, 10);
    QVERIFY(!fs::exists(dir() / "never"));
  }

  // Issue 37.7, one case at a time: each refused when read, exit 2, the field named.
  void advisedPlansAreCheckedLikeRun() {
    // Recipes that name no module: advise trained on (exit 0), run refused.
    const fs::path noModule = writeRun(dir() / "no-module.json", [](nlohmann::json& j) {
      j["plan"]["recipes"] = {{"transformer.h.9", "bf16-sr"}};
    });
    for (const char* command : {"advise", "run"})
      expectRefused({command, str(noModule), "--out", str(dir() / "never")},
                    {"'plan'", "recipes 'transformer.h.9' names no module of the model"});
    expectRefused({"advise", "--default", "--seeds", "1,1,1", "--out", str(dir() / "never")},
                  {"--seeds: seed 1 is listed twice"});
    expectRefused({"run", "--default", "--seeds", "1,1,1", "--out", str(dir() / "never")},
                  {"--seeds: seed 1 is listed twice"});
    expectRefused({"advise", "--default", "--tolerance", "0x10", "--out", str(dir() / "never")},
                  {"--tolerance: '0x10' is not a positive number of nats"});
    expectRefused({"advise", "--default", "--tolerance", "inf", "--out", str(dir() / "never")}, {"--tolerance"});
    QVERIFY(!fs::exists(dir() / "never"));
  }

  void fieldsAreCheckedWhenRead() {
    // fp16 with an nvfp4 GEMM failed at step 1 ("quantizeDequantize ... got Half").
    expectRefused({"run", str(writeRun(dir() / "fp16-nvfp4.json", [](nlohmann::json& j) {
                     j["mode"] = "fp16";
                     j["plan"]["gemm_format"] = "nvfp4";
                   })),
                   "--out", str(dir() / "never")},
                  {"'plan.gemm_format'", "mode fp16 holds fp16 weights"});
    // 2^63 was echoed as "got -9223372036854775808".
    const fs::path threads = writeRun(dir() / "threads.json", [](nlohmann::json& j) { j["threads"] = 1234567; });
    {
      std::ifstream in(threads);
      std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      body.replace(body.find("1234567"), 7, "9223372036854775808");  // 2^63, as the user wrote it
      std::ofstream(threads, std::ios::trunc) << body;
    }
    expectRefused({"run", str(threads), "--out", str(dir() / "never")},
                  {"'threads' is 9223372036854775808, out of range"});
    // A key given twice: the parser kept the last one silently.
    std::ofstream(dir() / "twice.json") << R"({"name": "a", "mode": "fp32", "mode": "bf16"})";
    expectRefused({"run", str(dir() / "twice.json"), "--out", str(dir() / "never")}, {"gives 'mode' twice"});
    // Tokens per step past int64 (batch x accumulation x length).
    expectRefused({"run", str(writeRun(dir() / "huge-batch.json", [](nlohmann::json& j) {
                     j["batch_size"] = int64_t(1) << 40;
                     j["grad_accum"] = int64_t(1) << 30;
                   })),
                   "--out", str(dir() / "never")},
                  {"out of range: at most 2^40 tokens per step"});
    QVERIFY(!fs::exists(dir() / "never"));
  }

  // `--out` naming a file exited 1 (advise) instead of 2.
  void anOutputFolderThatIsAFileIsAUsageError() {
    std::ofstream(dir() / "a-file") << "x";
    expectRefused({"advise", "--default", "--steps", "1", "--out", str(dir() / "a-file")}, {"is a file, not a folder"});
    expectRefused({"run", "--default", "--mode", "fp32", "--steps", "1", "--out", str(dir() / "a-file")},
                  {"is a file, not a folder"});
    expectRefused({"run", "--default", "--mode", "fp32", "--steps", "1", "--out", str(dir() / "a-file" / "sub")},
                  {"lies under a file"});
  }

  // The app's check (ui/run/run_config_check) calls the same function.
  void modelChecksNameTheField() {
    RunConfig c = defaultRunConfig();
    c.plan.recipes["transformer.nope"] = OptimizerMode::Bf16StochasticRounding;
    QVERIFY(mentions(errorMessageOf<ConfigError>([&] { checkRunConfigForModel(c); }),
                     "'plan': precision plan: recipes 'transformer.nope' names no module"));
    c = defaultRunConfig();
    c.plan.moments["transformer.nope"] = MomentPrecision::Dynamic8bit;
    QVERIFY(mentions(errorMessageOf<ConfigError>([&] { checkRunConfigForModel(c); }),
                     "'plan': precision plan: moments 'transformer.nope' names no module"));
    c = defaultRunConfig();
    c.mode = OptimizerMode::Bf16StochasticRounding;
    c.plan.moments["transformer.h.0"] = MomentPrecision::Dynamic8bit;
    checkRunConfigForModel(c);
    nlohmann::json fp16 = c.toJson();
    fp16["mode"] = "fp16-mixed";
    QVERIFY(mentions(errorMessageOf<ConfigError>([&] { RunConfig::fromJson(fp16); }),
                     "'plan.moments' gives layers their own moment store; mode fp16-mixed holds fp16 layers"));
    c = defaultRunConfig();
    c.plan.overrides["nope"] = LayerPrecision::Fp32;
    QVERIFY(mentions(errorMessageOf<ConfigError>([&] { checkRunConfigForModel(c); }), "override 'nope'"));
    c = defaultRunConfig();
    c.seq_len = 100000;
    QVERIFY(mentions(errorMessageOf<ConfigError>([&] { checkRunConfigForModel(c); }), "'seq_len' 100000 exceeds"));
    checkRunConfigForModel(defaultRunConfig());
    c = defaultRunConfig();
    c.model.source = "hub";
    c.model.path = "nobody/not-cached-here";
    checkRunConfigForModel(c);  // not resolvable yet: the run's setup says why
  }

  // summary.json steps_done 1e30 read back as -9223372036854775808.
  void storedCountsOutOfRangeAreNamed() {
    const fs::path run = dir() / "stored-run";
    fs::create_directories(run);
    std::ofstream(run / "config.json") << defaultRunConfig().toJson().dump();
    std::ofstream(run / "summary.json") << R"({"status": "completed", "steps_done": 1e30})";
    const std::string e = errorMessageOf<ConfigError>([&] { readRunFolder(run); });
    QVERIFY2(mentions(e, "summary.json") && mentions(e, "'steps_done' is 1e+30, not a whole number in range"), e.c_str());
    std::ofstream(run / "summary.json", std::ios::trunc) << R"({"status": "completed", "steps_done": 12})";
    QCOMPARE(readRunFolder(run).record.result.stepsDone, int64_t(12));
  }
};

PLAB_TEST_GUILESS_MAIN(TestConfigReading)
}  // namespace test_config_reading
#include "test_config_reading.moc"
