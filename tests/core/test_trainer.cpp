// The Trainer on the embedded tiny GPT-2 with short sequences: every mode
// runs and streams, loss falls, memory matches the prediction, controls
// (stop, pause) work from another thread, and failures end the run cleanly.
#include <QtTest/QtTest>
#include <torch/torch.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <thread>

#include "model/safetensors.h"
#include "support/test_registry.h"
#include "train/metrics_writer.h"
#include "support/small_runs.h"
#include "train/trainer.h"
#include "util/blas_info.h"
#include "util/errors.h"

namespace test_trainer {

using namespace plab;
namespace fs = std::filesystem;

namespace {

RunConfig smallRun(OptimizerMode mode, int64_t steps) {
  RunConfig c = plab::test::smallTrainingRun(mode, steps);
  c.eval_every = 2;
  c.eval_batches = 2;
  return c;
}

struct Recorded {
  RunInfo info;
  std::vector<StepMetrics> steps;
  std::vector<std::string> logs;
  RunResult result;
};

Recorded runAndRecord(Trainer& t, std::function<void(const StepMetrics&)> extra = {}) {
  Recorded r;
  Trainer::Callbacks cb;
  cb.onStart = [&](const RunInfo& i) { r.info = i; };
  cb.onStep = [&](const StepMetrics& m) {
    r.steps.push_back(m);
    if (extra) extra(m);
  };
  cb.onLog = [&](const std::string& s) { r.logs.push_back(s); };
  r.result = t.run(cb);
  return r;
}

int jsonlLines(const fs::path& dir) { return int(readMetricsJsonl(dir / "metrics.jsonl").size()); }

// Runs c to its end and checks it failed with a message naming `what`.
void expectFailureMentioning(const RunConfig& c, const std::string& what) {
  Trainer t(c);
  const Recorded r = runAndRecord(t);
  QVERIFY(r.result.status == RunStatus::Failed);
  QVERIFY2(r.result.message.find(what) != std::string::npos, r.result.message.c_str());
}

}  // namespace

class TestTrainer : public QObject {
  Q_OBJECT
 private slots:
  void everyModeRunsAndStreams() {
    QTemporaryDir tmp;
    for (OptimizerMode mode : allOptimizerModes()) {
      RunConfig c = smallRun(mode, 4);
      c.output_dir = (fs::path(tmp.path().toStdString()) / optimizerModeId(mode)).string();
      Trainer t(c);
      const Recorded r = runAndRecord(t);
      QVERIFY2(r.result.status == RunStatus::Completed, r.result.message.c_str());
      QCOMPARE(r.result.stepsDone, int64_t(4));
      QCOMPARE(int(r.steps.size()), 4);
      QCOMPARE(jsonlLines(c.output_dir), 4);
      for (const StepMetrics& m : r.steps) {
        QVERIFY(std::isfinite(m.loss));
        QVERIFY(m.tokensPerSecond > 0);
        // The measured training state is what predictMemory said it would be.
        QCOMPARE(toJson(m.memory), toJson(r.info.predictedMemory));
        QVERIFY(!m.layers.empty());  // layer_stats_every = 1
        QCOMPARE(m.layers.size(), r.info.layers.size());
        // A window of 2 steps closes on even steps, with a figure per layer.
        QCOMPARE(bool(m.updateLost), m.step % 2 == 0);
        QCOMPARE(m.windowLayers.size(), m.step % 2 == 0 ? r.info.layers.size() : size_t(0));
        if (mode == OptimizerMode::Fp32AdamW && m.updateLost) QCOMPARE(*m.updateLost, 0.0);
      }
      QCOMPARE(r.info.optimizerMode, optimizerModeId(mode));
      QVERIFY(r.result.meanUpdateLost.has_value());
      QVERIFY(r.steps[1].valLoss && r.steps[3].valLoss && !r.steps[0].valLoss);
      QCOMPARE(r.info.tokensPerStep, int64_t(4 * 16));
      QCOMPARE(r.info.fp32Baseline.total(), 16 * r.info.parameterCount);
      if (mode == OptimizerMode::Fp32AdamW) QCOMPARE(r.info.bf16ParameterCount, int64_t(0));
      else QVERIFY(r.info.bf16ParameterCount > 0);
      QVERIFY(r.result.memorySavedFraction < 1.0);
      // config.json re-creates the run; summary.json records the result.
      std::ifstream cfg(fs::path(c.output_dir) / "config.json");
      QCOMPARE(RunConfig::fromJson(nlohmann::json::parse(cfg)).toJson(), c.toJson());
      std::ifstream summary(fs::path(c.output_dir) / "summary.json");
      QCOMPARE(nlohmann::json::parse(summary).at("status").get<std::string>(), std::string("completed"));
      QVERIFY(fs::exists(fs::path(c.output_dir) / "run_info.json"));
      QVERIFY(!r.logs.empty());
    }
  }

  // 50 steps, a checkpoint, 50 more from it: the same weights and optimizer
  // state, bit for bit, as 100 steps in one go (CPU), for every recipe.
  void resumeContinuesBitForBit() {
    for (OptimizerMode mode : allOptimizerModes()) {
      QTemporaryDir tmp;
      const fs::path root = tmp.path().toStdString();
      RunConfig c = smallRun(mode, 100);
      c.checkpoint_every = 50;
      c.output_dir = (root / "whole").string();
      Trainer whole(c);
      QVERIFY(runAndRecord(whole).result.status == RunStatus::Completed);

      RunConfig resumed = c;
      resumed.output_dir = (root / "resumed").string();
      resumed.resume_from = (root / "whole" / "checkpoint-50").string();
      Trainer second(resumed);
      const Recorded r = runAndRecord(second);
      QVERIFY2(r.result.status == RunStatus::Completed, r.result.message.c_str());
      QCOMPARE(r.steps.front().step, int64_t(51));
      QCOMPARE(int(r.steps.size()), 50);

      for (const char* file : {"model.safetensors", "optimizer.safetensors"}) {
        const SafetensorsFile a(root / "whole" / "checkpoint-100" / file);
        const SafetensorsFile b(root / "resumed" / "checkpoint-100" / file);
        QCOMPARE(a.names().size(), b.names().size());
        for (const std::string& name : a.names())
          QVERIFY2(torch::equal(a.load(name), b.load(name)), (optimizerModeId(mode) + " " + file + " " + name).c_str());
      }
    }
  }

  void resumeRefusesABrokenCheckpoint() {
    QTemporaryDir tmp;
    RunConfig c = smallRun(OptimizerMode::Bf16Kahan, 4);
    c.resume_from = tmp.path().toStdString();  // no trainer_state.json there
    expectFailureMentioning(c, "cannot resume");
  }

  // The default model is the embedded pretrained checkpoint: far below the
  // uniform loss of a fresh model from its first step.
  void embeddedModelIsPretrained() {
    RunConfig c = smallRun(OptimizerMode::Fp32AdamW, 1);
    Trainer t(c);
    const Recorded r = runAndRecord(t);
    QVERIFY2(r.result.status == RunStatus::Completed, r.result.message.c_str());
    QVERIFY2(r.steps.front().loss < 2.6, std::to_string(r.steps.front().loss).c_str());
    bool said = false;
    for (const std::string& l : r.logs) said = said || l.find("embedded tiny-gpt2 (pretrained)") != std::string::npos;
    QVERIFY(said);
  }

  // The setup installs OpenBLAS; run_info says which BLAS really ran.
  // run_info.json says what the run trained with: the LibTorch (2.x), whether
  // the CUDA kernels are linked, the threads, the BLAS, the bf16 product path.
  void runInfoNamesTheRuntime() {
    RunConfig c = smallRun(OptimizerMode::Bf16Kahan, 1);
    c.threads = 1;
    Trainer t(c);
    const Recorded r = runAndRecord(t);
    QVERIFY2(r.info.libtorchVersion.rfind("2.", 0) == 0, r.info.libtorchVersion.c_str());
#ifdef PLAB_HAVE_CUDA_KERNELS
    QVERIFY(r.info.cudaKernelsLinked);
#else
    QVERIFY(!r.info.cudaKernelsLinked);
#endif
    QCOMPARE(r.info.intraOpThreads, 1);
    QVERIFY2(!r.info.blas.empty() && r.info.blas != "unknown", r.info.blas.c_str());
    QVERIFY(!loadedBlas().slow);
    QVERIFY2(r.info.cpuBf16Gemm.find("bf16") != std::string::npos, r.info.cpuBf16Gemm.c_str());
    // Chosen by timing this run's products (model/bf16_gemm_choice.h), its figures named.
    if (!std::getenv("PLAB_BF16_GEMM"))
      QVERIFY2(r.info.cpuBf16Gemm.find("chosen by measurement: native ") != std::string::npos &&
                   r.info.cpuBf16Gemm.find(" GFLOP/s over ") != std::string::npos,
               r.info.cpuBf16Gemm.c_str());
    const nlohmann::json j = toJson(r.info);
    for (const char* key : {"libtorch_version", "cuda_kernels_linked", "intra_op_threads", "blas", "cpu_bf16_matmul",
                            "cpu_capability", "mkl_cnr"})
      QVERIFY2(j.contains(key), key);
    // What fp32 results depend on across machines (docs/reproducibility.md, "Determinism").
    QVERIFY2(r.info.cpuCapability == "DEFAULT" || r.info.cpuCapability == "AVX2" || r.info.cpuCapability == "AVX512",
             r.info.cpuCapability.c_str());
    // 0 threads: one per CPU the process may run on.
    c.threads = 0;
    Trainer all(c);
    QVERIFY(runAndRecord(all).info.intraOpThreads >= 1);
  }

  void weightDecayRoundedAwayIsReported() {
    RunConfig c = smallRun(OptimizerMode::Bf16Plain, 1);
    c.adamw.weight_decay = 0.1;  // lr 5e-5 x 0.1 = 5e-6 < 2^-9
    Trainer t(c);
    const Recorded r = runAndRecord(t);
    QVERIFY(r.info.weightDecayRoundedAway);
    bool said = false;
    for (const std::string& l : r.logs) said = said || l.find("weight decay is rounded away") != std::string::npos;
    QVERIFY(said);
    c.mode = OptimizerMode::Bf16Kahan;
    Trainer kahan(c);
    QVERIFY(!runAndRecord(kahan).info.weightDecayRoundedAway);
  }

  void fp32LossStartsNearUniformAndFalls() {
    RunConfig c = smallRun(OptimizerMode::Fp32AdamW, 30);
    c.model.source = "embedded-init";
    c.adamw.lr = 3e-3;
    c.lr_schedule = "constant";
    c.eval_every = 0;
    Trainer t(c);
    const Recorded r = runAndRecord(t);
    QVERIFY2(r.result.status == RunStatus::Completed, r.result.message.c_str());
    // A fresh model predicts ~uniformly over the 257 byte tokens.
    QVERIFY2(std::fabs(r.steps.front().loss - std::log(257.0)) < 0.3, std::to_string(r.steps.front().loss).c_str());
    double first = 0, last = 0;
    for (int i = 0; i < 5; ++i) {
      first += r.steps[i].loss / 5;
      last += r.steps[25 + i].loss / 5;
    }
    QVERIFY2(last < first - 1.0, (std::to_string(first) + " -> " + std::to_string(last)).c_str());
    QVERIFY(r.result.finalValLoss && std::isfinite(*r.result.finalValLoss));
  }

  void sameSeedSameLosses() {
    RunConfig c = smallRun(OptimizerMode::Bf16StochasticRounding, 3);
    Trainer a(c), b(c);
    const Recorded ra = runAndRecord(a), rb = runAndRecord(b);
    for (int i = 0; i < 3; ++i) QCOMPARE(ra.steps[i].loss, rb.steps[i].loss);
    c.seed = 7;
    Trainer d(c);
    QVERIFY(runAndRecord(d).steps[0].loss != ra.steps[0].loss);
  }

  void gradAccumulationCountsTokens() {
    RunConfig c = smallRun(OptimizerMode::Bf16Kahan, 2);
    c.grad_accum = 3;
    Trainer t(c);
    const Recorded r = runAndRecord(t);
    QVERIFY2(r.result.status == RunStatus::Completed, r.result.message.c_str());
    QCOMPARE(r.info.tokensPerStep, int64_t(3 * 4 * 16));
  }

  void stopFromAnotherThread() {
    QTemporaryDir tmp;
    RunConfig c = smallRun(OptimizerMode::Bf16Plain, 100000);
    c.output_dir = tmp.path().toStdString();
    Trainer t(c);
    std::atomic<int64_t> seen{0};
    std::thread stopper([&] {
      while (seen < 3) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      t.stop();
    });
    const Recorded r = runAndRecord(t, [&](const StepMetrics& m) { seen = m.step; });
    stopper.join();
    QVERIFY(r.result.status == RunStatus::Stopped);
    QVERIFY(r.result.stepsDone >= 3 && r.result.stepsDone < 100);
    QCOMPARE(jsonlLines(c.output_dir), int(r.result.stepsDone));
    std::ifstream summary(fs::path(c.output_dir) / "summary.json");
    QCOMPARE(nlohmann::json::parse(summary).at("status").get<std::string>(), std::string("stopped"));
  }

  void pauseHoldsAndResumeContinues() {
    RunConfig c = smallRun(OptimizerMode::Bf16Kahan, 6);
    c.eval_every = 0;
    Trainer t(c);
    std::atomic<int64_t> seen{0};
    int64_t seenWhilePaused = -1;
    bool pausedFlag = false;
    std::thread controller([&] {
      while (seen < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      t.pause();
      pausedFlag = t.paused();
      std::this_thread::sleep_for(std::chrono::milliseconds(150));
      const int64_t before = seen;
      std::this_thread::sleep_for(std::chrono::milliseconds(400));
      seenWhilePaused = seen - before;  // no step may finish while paused
      t.resume();
    });
    const Recorded r = runAndRecord(t, [&](const StepMetrics& m) { seen = m.step; });
    controller.join();
    QVERIFY(pausedFlag);
    QCOMPARE(seenWhilePaused, int64_t(0));
    QVERIFY(!t.paused());
    QVERIFY2(r.result.status == RunStatus::Completed, r.result.message.c_str());
    QCOMPARE(r.result.stepsDone, int64_t(6));
  }

  void stopWakesAPausedRun() {
    RunConfig c = smallRun(OptimizerMode::Fp32AdamW, 50);
    Trainer t(c);
    t.pause();
    std::thread stopper([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      t.stop();
    });
    const Recorded r = runAndRecord(t);
    stopper.join();
    QVERIFY(r.result.status == RunStatus::Stopped);
    QCOMPARE(r.result.stepsDone, int64_t(0));
  }

  void divergenceFailsNamingTheStep() {
    QTemporaryDir tmp;
    RunConfig c = smallRun(OptimizerMode::Fp32AdamW, 20);
    c.adamw.lr = 1e30;  // the first update blows every weight up
    c.lr_schedule = "constant";
    c.grad_clip = 0;
    c.output_dir = tmp.path().toStdString();
    Trainer t(c);
    const Recorded r = runAndRecord(t);
    QVERIFY(r.result.status == RunStatus::Failed);
    const std::string& msg = r.result.message;
    QVERIFY2(msg.find("loss became") != std::string::npos, msg.c_str());
    const int64_t bad = r.steps.back().step;
    QVERIFY2(msg.find("at step " + std::to_string(bad)) != std::string::npos, msg.c_str());
    QVERIFY(msg.find("mode=fp32") != std::string::npos);
    QVERIFY(bad >= 2 && bad < 20);
    // Everything measured up to the failure is on disk.
    QCOMPARE(jsonlLines(c.output_dir), int(r.steps.size()));
    std::ifstream summary(fs::path(c.output_dir) / "summary.json");
    QCOMPARE(nlohmann::json::parse(summary).at("status").get<std::string>(), std::string("failed"));
  }

  void missingModelFolderFails() {
    RunConfig c = smallRun(OptimizerMode::Bf16Kahan, 2);
    c.model.source = "folder";
    c.model.path = "/nonexistent/precision-lab-model";
    Trainer t(c);
    const Recorded r = runAndRecord(t);
    QVERIFY(r.result.status == RunStatus::Failed);
    QVERIFY2(r.result.message.find("/nonexistent/precision-lab-model") != std::string::npos,
             r.result.message.c_str());
    QCOMPARE(r.result.stepsDone, int64_t(0));
  }

  void brokenModelConfigFails() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    {
      std::ofstream(dir / "config.json") << "{\"model_type\": \"gpt2\", \"n_embd\": ";
    }
    RunConfig c = smallRun(OptimizerMode::Bf16Kahan, 2);
    c.model.source = "config";
    c.model.path = (dir / "config.json").string();
    expectFailureMentioning(c, "config.json");
  }

  void tokenizerMustFitVocabulary() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    {
      std::ofstream(dir / "config.json") << R"({"model_type": "gpt2", "vocab_size": 61, "n_embd": 32,
        "n_layer": 1, "n_head": 4, "n_positions": 32})";
    }
    RunConfig c = smallRun(OptimizerMode::Bf16Kahan, 2);
    c.model.source = "config";
    c.model.path = dir.string();
    expectFailureMentioning(c, "vocab_size");
  }

  void sequenceLongerThanPositionsFails() {
    RunConfig c = smallRun(OptimizerMode::Bf16Kahan, 2);
    c.seq_len = 4096;
    expectFailureMentioning(c, "seq_len");
  }

  void unavailableCudaFails() {
    if (torch::cuda::is_available()) QSKIP("CUDA present");
    RunConfig c = smallRun(OptimizerMode::Bf16Kahan, 2);
    c.device = "cuda";
    expectFailureMentioning(c, "CUDA");
  }

  void unwritableOutputFails() {
    RunConfig c = smallRun(OptimizerMode::Bf16Kahan, 2);
    c.output_dir = "/dev/full/run";
    expectFailureMentioning(c, "/dev/full/run");
  }
};

PLAB_TEST_GUILESS_MAIN(TestTrainer)
}  // namespace test_trainer
#include "test_trainer.moc"
