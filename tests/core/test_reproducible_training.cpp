// fp32 CPU training is deterministic: two runs of one config on one machine
// train the same weights, bit for bit; and a "reproducible" run trains the
// same weights whatever kernels the machine would pick (ATen's AVX2/AVX-512
// variants, MKL's code path), simulated with ATEN_CPU_CAPABILITY and MKL_CBWR
// (resources/models/tiny-gpt2/README.md: the pretrained checkpoint's recipe).
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest/QtTest>
#include <ATen/Version.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "support/test_registry.h"
#include "train/trainer.h"

namespace test_reproducible_training {

using namespace plab;
namespace fs = std::filesystem;

namespace {

// A small fp32 pretraining from random init at the pretraining's lr: large
// steps, so that a last-bit difference anywhere shows in the weights.
RunConfig tinyPretrain(const fs::path& dir, uint64_t seed, int64_t threads) {
  RunConfig c = defaultRunConfig();
  c.name = "repro";
  c.model.source = "embedded-init";
  c.mode = OptimizerMode::Fp32AdamW;
  c.adamw.lr = 3e-3;
  c.lr_schedule = "constant";
  c.warmup_steps = 0;
  c.steps = 8;
  c.batch_size = 4;
  c.seq_len = 32;
  c.eval_every = 0;
  c.eval_batches = 1;
  c.layer_stats_every = 1000;
  c.update_window = 0;
  c.checkpoint_every = c.steps;
  c.seed = seed;
  c.device = "cpu";
  c.threads = threads;
  c.output_dir = dir.string();
  return c;
}

std::string weightsOf(const fs::path& runDir) {
  std::ifstream in(runDir / "checkpoint-8" / "model.safetensors", std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string trainInProcess(const RunConfig& c) {
  Trainer t(c);
  const RunResult r = t.run({});
  if (r.status != RunStatus::Completed) qWarning("run failed: %s", r.message.c_str());
  return weightsOf(c.output_dir);
}

struct CliRun {
  int exitCode = -1;
  QString err;
  std::string weights;
};

// precision-lab-cli on config c, in an environment that makes LibTorch pick
// the given kernels (a simulated other machine): ATEN_CPU_CAPABILITY and
// MKL_CBWR, plus any other variables in `extra`.
CliRun trainInCli(const RunConfig& c, const QString& atenCapability, const QString& mklBranch,
                  const std::vector<std::pair<QString, QString>>& extra = {}) {
  const fs::path configFile = fs::path(c.output_dir).parent_path() / (fs::path(c.output_dir).filename().string() + ".json");
  nlohmann::json j = c.toJson();
  j.erase("output_dir");
  std::ofstream(configFile) << j.dump();
  QProcess p;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("ATEN_CPU_CAPABILITY", atenCapability);
  env.insert("MKL_CBWR", mklBranch);
  for (const auto& [name, value] : extra) env.insert(name, value);
  p.setProcessEnvironment(env);
  p.start(qEnvironmentVariable("PLAB_CLI"), {"run", QString::fromStdString(configFile.string()), "--out",
                                             QString::fromStdString(c.output_dir), "--no-pdf"});
  CliRun r;
  if (!p.waitForFinished(120000)) {
    p.kill();
    p.waitForFinished();
  }
  r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
  r.err = QString::fromUtf8(p.readAllStandardError());
  r.weights = weightsOf(c.output_dir);
  return r;
}

}  // namespace

class TestReproducibleTraining : public QObject {
  Q_OBJECT
  // ATen's choice on this machine, taken before anything here pins it.
  const std::string nativeCapability_ = at::get_cpu_capability();

 private slots:
  void twoRunsOnOneMachineTrainTheSameWeights() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    std::string oneThread;
    for (int64_t threads : {1, 2}) {
      const std::string t = std::to_string(threads);
      const std::string first = trainInProcess(tinyPretrain(dir / ("a" + t), 0, threads));
      const std::string second = trainInProcess(tinyPretrain(dir / ("b" + t), 0, threads));
      QVERIFY(first.size() > 400000);  // 124,736 fp32 weights
      QVERIFY2(first == second, ("threads " + t).c_str());
      if (threads == 1) oneThread = first;
    }
    // The comparison sees a difference where there is one.
    QVERIFY(trainInProcess(tinyPretrain(dir / "seed1", 1, 1)) != oneThread);
  }

  void reproducibleRunIgnoresTheMachinesKernels() {
    if (qEnvironmentVariableIsEmpty("PLAB_CLI")) QSKIP("PLAB_CLI not set (run through ctest)");
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    RunConfig pinned = tinyPretrain(dir / "portable", 0, 1);
    pinned.reproducible = true;
    const CliRun portable = trainInCli(pinned, "default", "COMPATIBLE");
    QVERIFY2(portable.exitCode == 0, qPrintable(portable.err));
    QVERIFY2(portable.err.contains("reproducible CPU math: 1 intra-op thread, ATen's DEFAULT kernels"),
             qPrintable(portable.err));
    if (nativeCapability_ == "DEFAULT") QSKIP("this CPU has no AVX2: ATen has no other kernels to pick here");

    const QString native = QString::fromStdString(nativeCapability_).toLower();
    pinned.output_dir = (dir / "native").string();
    const CliRun fast = trainInCli(pinned, native, "AUTO");
    QVERIFY2(fast.exitCode == 0, qPrintable(fast.err));
    QVERIFY2(fast.weights == portable.weights, "a reproducible run depends on the kernels the machine offers");

    // Without the pin the machine's kernels change the weights: the check
    // above can fail.
    RunConfig unpinned = tinyPretrain(dir / "free-default", 0, 1);
    const CliRun freeDefault = trainInCli(unpinned, "default", "AUTO");
    unpinned.output_dir = (dir / "free-native").string();
    const CliRun freeNative = trainInCli(unpinned, native, "AUTO");
    QVERIFY2(freeDefault.exitCode == 0 && freeNative.exitCode == 0, qPrintable(freeDefault.err + freeNative.err));
    QVERIFY(freeDefault.weights != freeNative.weights);
  }

  // The pinned step under every CPU dispatch variant that can be forced on
  // one machine, each a simulated other CPU: ATen's kernels and MKL's branch
  // asked for from outside (the pin overrides them), MKL's instruction set,
  // its old AMD switch, oneDNN's instruction set, glibc's libm variants
  // (hwcaps: libm's expf, tanhf... as on a CPU without AVX, AVX2, FMA and
  // AVX-512) and a second thread asked for by OMP_NUM_THREADS. Each trains
  // the same bits as the plain pinned run. What cannot be forced here: another
  // vendor's MKL dispatch inside its COMPATIBLE branch (Intel documents that
  // branch as SSE2 code without the approximate rcpps/rsqrtps, identical on
  // Intel and compatible CPUs), another glibc version, another LibTorch build.
  void reproducibleRunUnderForcedDispatchVariants() {
    if (qEnvironmentVariableIsEmpty("PLAB_CLI")) QSKIP("PLAB_CLI not set (run through ctest)");
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    RunConfig pinned = tinyPretrain(dir / "base", 0, 1);
    pinned.reproducible = true;
    const CliRun base = trainInCli(pinned, "default", "COMPATIBLE");
    QVERIFY2(base.exitCode == 0 && base.weights.size() > 400000, qPrintable(base.err));
    struct Variant {
      const char* name;
      QString aten, mkl;
      std::vector<std::pair<QString, QString>> extra;
    };
    const std::vector<Variant> variants = {
        {"ATen avx2, MKL AUTO", "avx2", "AUTO", {}},
        {"ATen avx512, MKL AVX512", "avx512", "AVX512", {}},
        {"MKL_CBWR=AVX2,STRICT", "default", "AVX2,STRICT", {}},
        {"MKL_ENABLE_INSTRUCTIONS=SSE4_2", "default", "AUTO", {{"MKL_ENABLE_INSTRUCTIONS", "SSE4_2"}}},
        {"MKL_ENABLE_INSTRUCTIONS=AVX512", "default", "AUTO", {{"MKL_ENABLE_INSTRUCTIONS", "AVX512"}}},
        {"MKL_DEBUG_CPU_TYPE=5", "default", "AUTO", {{"MKL_DEBUG_CPU_TYPE", "5"}}},
        {"ONEDNN_MAX_CPU_ISA=SSE41", "default", "AUTO", {{"ONEDNN_MAX_CPU_ISA", "SSE41"}}},
        {"ONEDNN_MAX_CPU_ISA=AVX2", "default", "AUTO", {{"ONEDNN_MAX_CPU_ISA", "AVX2"}}},
        {"glibc hwcaps without AVX, AVX2, FMA, AVX-512", "default", "COMPATIBLE",
         {{"GLIBC_TUNABLES", "glibc.cpu.hwcaps=-AVX2,-FMA,-AVX512F,-AVX"}}},
        {"OMP_NUM_THREADS=2, MKL_DYNAMIC=TRUE", "default", "COMPATIBLE",
         {{"OMP_NUM_THREADS", "2"}, {"MKL_DYNAMIC", "TRUE"}}},
    };
    for (size_t i = 0; i < variants.size(); ++i) {
      const Variant& v = variants[i];
      pinned.output_dir = (dir / ("v" + std::to_string(i))).string();
      const CliRun r = trainInCli(pinned, v.aten, v.mkl, v.extra);
      QVERIFY2(r.exitCode == 0, qPrintable(QString(v.name) + ": " + r.err));
      qInfo("%s: %s", v.name, r.weights == base.weights ? "same bits" : "DIFFERENT bits");
      QVERIFY2(r.weights == base.weights, v.name);
    }
  }

  // Last: it pins this process's environment. Here ATen has long picked its
  // kernels, so a reproducible run refuses to start instead of running
  // unpinned.
  void reproducibleRunRefusesAnAlreadyStartedLibTorch() {
    if (nativeCapability_ == "DEFAULT") QSKIP("this CPU has no AVX2: ATen runs its default kernels anyway");
    QTemporaryDir tmp;
    RunConfig c = tinyPretrain(fs::path(tmp.path().toStdString()) / "late", 0, 1);
    c.reproducible = true;
    Trainer t(c);
    const RunResult r = t.run({});
    QVERIFY(r.status == RunStatus::Failed);
    QVERIFY2(r.message.find("reproducible") != std::string::npos && r.message.find(nativeCapability_) != std::string::npos,
             r.message.c_str());
  }
};

PLAB_TEST_GUILESS_MAIN(TestReproducibleTraining)
}  // namespace test_reproducible_training
#include "test_reproducible_training.moc"
