// The fp16 modes in the Trainer, on the embedded tiny GPT-2: "fp16" holds
// fp16 weights and state; "fp16-mixed" scales the loss with GradScaler's
// rule (its arithmetic is held to torch.amp.GradScaler in
// tests/reference/grad_scaler_vs_torch.py), skips the steps whose fp16
// gradients overflow (weights, state and step counts untouched), backs off
// and grows the scale, and resumes bit for bit with the scaler's state. The
// physics: without a scale fp16 gradients lose small values that the scaled
// ones keep.
#include <QtTest/QtTest>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>

#include "model/safetensors.h"
#include "precision/fp16_eps.h"
#include "support/seed_spread.h"
#include "train/checkpoint_manifest.h"
#include "support/test_registry.h"
#include "train/metrics_writer.h"
#include "support/small_runs.h"
#include "train/trainer.h"

namespace test_fp16_training {

using namespace plab;
namespace fs = std::filesystem;

namespace {

RunConfig smallRun(OptimizerMode mode, int64_t steps) {
  RunConfig c = plab::test::smallTrainingRun(mode, steps);
  c.eval_every = 0;
  c.eval_batches = 1;
  // fp16 cannot hold torch's default eps (1e-8 rounds to 0): with it, plain
  // fp16 AdamW divides 0 by 0 on the first zero gradient. 1e-4 is what
  // fp16 training recipes use instead.
  c.adamw.eps = 1e-4;
  return c;
}

struct Recorded {
  RunInfo info;
  std::vector<StepMetrics> steps;
  std::vector<std::string> logs;
  RunResult result;
};

Recorded runAndRecord(const RunConfig& c) {
  Trainer t(c);
  Recorded r;
  Trainer::Callbacks cb;
  cb.onStart = [&](const RunInfo& i) { r.info = i; };
  cb.onStep = [&](const StepMetrics& m) { r.steps.push_back(m); };
  cb.onLog = [&](const std::string& s) { r.logs.push_back(s); };
  r.result = t.run(cb);
  return r;
}

nlohmann::json readJsonFile(const fs::path& file) {
  std::ifstream in(file);
  return nlohmann::json::parse(in);
}

bool sameTensors(const fs::path& a, const fs::path& b) {
  const SafetensorsFile fa(a), fb(b);
  if (fa.names() != fb.names()) return false;
  for (const std::string& name : fa.names())
    if (!torch::equal(fa.load(name), fb.load(name))) return false;
  return true;
}

// GradScaler's update rule written out (torch/amp/grad_scaler.py,
// _amp_update_scale_) from the skip flags alone: the scale each step should
// have used.
std::vector<double> gradScalerScales(double init, int64_t interval, const std::vector<bool>& skipped) {
  std::vector<double> used;
  double scale = init;
  int64_t tracker = 0;
  for (bool skip : skipped) {
    used.push_back(scale);
    if (skip) {
      scale *= 0.5;
      tracker = 0;
    } else if (++tracker == interval) {
      scale *= 2;
      tracker = 0;
    }
  }
  return used;
}

// A run that overflows at its first steps: a scale of 2^26 puts the fp16
// gradients beyond 65504 until the scale has backed off.
RunConfig overflowingRun(int64_t steps) {
  RunConfig c = smallRun(OptimizerMode::Fp16Mixed, steps);
  c.loss_scale_init = std::ldexp(1.0, 26);
  c.loss_scale_growth_interval = 3;
  return c;
}

}  // namespace

class Fp16TrainingTest : public QObject {
  Q_OBJECT
 private slots:
  void fp16MixedRunsAndStreams() {
    QTemporaryDir tmp;
    RunConfig c = smallRun(OptimizerMode::Fp16Mixed, 4);
    c.output_dir = tmp.path().toStdString();
    const Recorded r = runAndRecord(c);
    QVERIFY2(r.result.status == RunStatus::Completed, r.result.message.c_str());
    QVERIFY(r.info.bf16ParameterCount > 0);  // the plan's low-precision layers, in fp16
    QCOMPARE(QString::fromStdString(r.info.optimizerMode), QString("fp16-mixed"));
    QCOMPARE(QString::fromStdString(r.info.momentPrecision), QString("fp32"));
    QVERIFY(r.info.predictedMemory.master > 0);
    QCOMPARE(int(r.steps.size()), 4);
    for (const StepMetrics& m : r.steps) {
      QVERIFY(std::isfinite(m.loss));
      QVERIFY(m.lossScale && m.stepSkipped);
      QCOMPARE(*m.lossScale, 65536.0);  // no overflow at GradScaler's initial scale here
      QVERIFY(!*m.stepSkipped);
      QVERIFY(m.gradFp16FlushShare && m.gradFp16ZeroShare);
      QVERIFY(!m.fp16GradLayers.empty());
      for (const LayerFp16GradMetrics& l : m.fp16GradLayers) {
        QVERIFY(l.flushShare);
        QVERIFY(*l.flushShare >= 0 && *l.flushShare <= 1);
        QVERIFY(l.zeroShare >= 0 && l.zeroShare <= 1);
      }
      // The measured state (fp32 gradients, fp32 master) is the prediction.
      QCOMPARE(toJson(m.memory), toJson(r.info.predictedMemory));
      QVERIFY(!m.layers.empty());
    }
    const auto lines = readMetricsJsonl(fs::path(c.output_dir) / "metrics.jsonl");
    QCOMPARE(int(lines.size()), 4);
    QCOMPARE(*lines[0].lossScale, 65536.0);
    QVERIFY(lines[0].stepSkipped && !*lines[0].stepSkipped);
    QCOMPARE(lines[0].fp16GradLayers.size(), r.steps[0].fp16GradLayers.size());
    QCOMPARE(readJsonFile(fs::path(c.output_dir) / "config.json").at("loss_scale").at("init_scale").get<double>(),
             65536.0);
  }

  void fp16PlainHoldsFp16AndReportsZeros() {
    const Recorded r = runAndRecord(smallRun(OptimizerMode::Fp16Plain, 3));
    QVERIFY2(r.result.status == RunStatus::Completed, r.result.message.c_str());
    QCOMPARE(QString::fromStdString(r.info.momentPrecision), QString("fp16"));
    QCOMPARE(r.info.predictedMemory.master, int64_t(0));
    for (const StepMetrics& m : r.steps) {
      QVERIFY(!m.lossScale && !m.stepSkipped && !m.gradFp16FlushShare);  // no scaler, nothing measured in fp32
      QVERIFY(m.gradFp16ZeroShare);
      QVERIFY(!m.fp16GradLayers.empty());
      QCOMPARE(toJson(m.memory), toJson(r.info.predictedMemory));
    }
  }

  // The other modes' step lines carry none of the fp16 keys.
  void otherModesWriteNoFp16Keys() {
    QTemporaryDir tmp;
    RunConfig c = smallRun(OptimizerMode::Fp32MasterWeights, 2);
    c.output_dir = tmp.path().toStdString();
    QVERIFY(runAndRecord(c).result.status == RunStatus::Completed);
    std::ifstream in(fs::path(c.output_dir) / "metrics.jsonl");
    std::string line;
    int lines = 0;
    while (std::getline(in, line)) {
      ++lines;
      for (const char* key : {"loss_scale", "step_skipped", "grad_fp16", "fp16_grad_layers"})
        QVERIFY2(line.find(key) == std::string::npos, line.c_str());
    }
    QCOMPARE(lines, 2);
    QVERIFY(!readJsonFile(fs::path(c.output_dir) / "config.json").contains("loss_scale"));
  }

  // Overflowing fp16 gradients: the step is skipped (weights, optimizer
  // state and step counts unchanged), the scale halves; after 3 clean steps
  // it doubles. The sequence is GradScaler's rule applied to the skip flags.
  void overflowSkipsBacksOffAndGrows() {
    QTemporaryDir tmp;
    RunConfig c = overflowingRun(24);
    c.checkpoint_every = 1;
    c.output_dir = tmp.path().toStdString();
    const Recorded r = runAndRecord(c);
    QVERIFY2(r.result.status == RunStatus::Completed, r.result.message.c_str());
    std::vector<bool> skipped;
    std::vector<double> used;
    for (const StepMetrics& m : r.steps) {
      skipped.push_back(*m.stepSkipped);
      used.push_back(*m.lossScale);
    }
    QString sequence;
    for (size_t i = 0; i < used.size(); ++i) sequence += QString("%1%2 ").arg(used[i]).arg(skipped[i] ? "(skip)" : "");
    qInfo("loss scale per step: %s", qPrintable(sequence));
    const int64_t skips = std::count(skipped.begin(), skipped.end(), true);
    QVERIFY2(skipped.front(), qPrintable(sequence));  // 2^26 overflows
    QVERIFY2(skips >= 2 && int64_t(skipped.size()) - skips >= 5, qPrintable(sequence));
    QCOMPARE(used, gradScalerScales(c.loss_scale_init, 3, skipped));
    QVERIFY2(std::adjacent_find(used.begin(), used.end(), std::less<double>()) != used.end(),
             qPrintable(sequence));  // it grew at least once
    for (const StepMetrics& m : r.steps) {
      QVERIFY(m.layers.empty() == *m.stepSkipped);  // a skipped step measures no update
      QVERIFY(m.gradFp16FlushShare);
    }

    const fs::path out = c.output_dir;
    for (size_t i = 1; i < skipped.size(); ++i) {
      const fs::path before = out / ("checkpoint-" + std::to_string(i));
      const fs::path after = out / ("checkpoint-" + std::to_string(i + 1));
      const bool unchanged = sameTensors(before / "model.safetensors", after / "model.safetensors") &&
                             sameTensors(before / "optimizer.safetensors", after / "optimizer.safetensors");
      QVERIFY2(unchanged == skipped[i], ("step " + std::to_string(i + 1)).c_str());
      const nlohmann::json state = readJsonFile(after / "trainer_state.json");
      const int64_t skipsSoFar = std::count(skipped.begin(), skipped.begin() + int64_t(i) + 1, true);
      QCOMPARE(state.at("optimizer").at("step").get<int64_t>(), int64_t(i + 1) - skipsSoFar);
      const double next = i + 1 < used.size() ? used[i + 1] : 0.0;
      if (i + 1 < used.size()) QCOMPARE(state.at("loss_scale").at("scale").get<double>(), next);
    }
  }

  // Resumed mid-run (after skipped steps and a backoff), the run continues
  // bit for bit: weights, optimizer state, scale sequence.
  void resumeRestoresTheScaler() {
    QTemporaryDir tmp;
    const fs::path root = tmp.path().toStdString();
    RunConfig c = overflowingRun(12);
    c.checkpoint_every = 6;
    c.output_dir = (root / "whole").string();
    const Recorded whole = runAndRecord(c);
    QVERIFY2(whole.result.status == RunStatus::Completed, whole.result.message.c_str());
    RunConfig resumed = c;
    resumed.output_dir = (root / "resumed").string();
    resumed.resume_from = (root / "whole" / "checkpoint-6").string();
    const Recorded second = runAndRecord(resumed);
    QVERIFY2(second.result.status == RunStatus::Completed, second.result.message.c_str());
    QCOMPARE(int(second.steps.size()), 6);
    for (size_t i = 0; i < 6; ++i) {
      QCOMPARE(*second.steps[i].lossScale, *whole.steps[i + 6].lossScale);
      QCOMPARE(*second.steps[i].stepSkipped, *whole.steps[i + 6].stepSkipped);
      QCOMPARE(second.steps[i].loss, whole.steps[i + 6].loss);
    }
    for (const char* file : {"model.safetensors", "optimizer.safetensors"})
      QVERIFY2(sameTensors(root / "whole" / "checkpoint-12" / file, root / "resumed" / "checkpoint-12" / file), file);
    QCOMPARE(readJsonFile(root / "whole" / "checkpoint-12" / "trainer_state.json").at("loss_scale"),
             readJsonFile(root / "resumed" / "checkpoint-12" / "trainer_state.json").at("loss_scale"));

    // A checkpoint without the scaler's state is refused in fp16-mixed.
    const fs::path stateFile = root / "whole" / "checkpoint-6" / "trainer_state.json";
    nlohmann::json state = readJsonFile(stateFile);
    state.erase("loss_scale");
    std::ofstream(stateFile) << state.dump();
    writeCheckpointManifest(stateFile.parent_path());  // its checksums again: the state's own check is tested
    resumed.output_dir = (root / "refused").string();
    const Recorded refused = runAndRecord(resumed);
    QVERIFY(refused.result.status == RunStatus::Failed);
    QVERIFY2(refused.result.message.find("loss_scale") != std::string::npos, refused.result.message.c_str());
  }

  // precision/fp16_eps.h's rule against torch's own fp16 arithmetic (the
  // ops mode fp16 steps with): v = fp16(beta2 v + (1 - beta2) g^2) is 0 just
  // below g0 = sqrt(2^-25 / (1 - beta2)) and not just above; eps rounds to 0
  // in fp16 just below 2^-25 and not just above it; and a run with the
  // default eps is warned before its first step and names eps in its failure,
  // while eps 1e-4 trains without the warning.
  void fp16EpsIsWarnedAndNamed() {
    for (double beta2 : {0.999, 0.99, 0.95}) {
      AdamWOptions o;
      o.beta2 = beta2;
      const Fp16EpsCheck c = checkFp16Eps(OptimizerMode::Fp16Plain, o);
      QVERIFY(c.dividesByZero && c.epsInFp16 == 0);
      for (double factor : {0.99, 1.01}) {  // g itself rounds to fp16 (2^-11 relative)
        const auto half = torch::TensorOptions().dtype(torch::kFloat16);
        const torch::Tensor g = torch::full({1}, factor * c.underflowBelow, half);
        torch::Tensor v = torch::zeros({1}, half);
        v.mul_(beta2).addcmul_(g, g, 1 - beta2);  // torch.optim.AdamW's single-tensor update of v
        QCOMPARE(v.item<double>() == 0, factor < 1);
      }
    }
    AdamWOptions o;
    o.eps = 2.9e-8;
    QVERIFY(checkFp16Eps(OptimizerMode::Fp16Plain, o).dividesByZero);
    o.eps = 3.0e-8;
    QVERIFY(!checkFp16Eps(OptimizerMode::Fp16Plain, o).dividesByZero);
    QVERIFY(torch::full({1}, 2.9e-8).to(torch::kFloat16).item<double>() == 0);
    QVERIFY(torch::full({1}, 3.0e-8).to(torch::kFloat16).item<double>() > 0);
    o.eps = 1e-8;
    QVERIFY(!checkFp16Eps(OptimizerMode::Fp16Mixed, o).applies);  // fp32 optimizer arithmetic
    QVERIFY(fp16EpsWarning(OptimizerMode::Bf16Plain, o).empty());

    RunConfig c = smallRun(OptimizerMode::Fp16Plain, 3);
    c.adamw.eps = 1e-8;
    const Recorded failed = runAndRecord(c);
    QVERIFY(failed.result.status == RunStatus::Failed);
    QVERIFY2(failed.result.message.find("loss became NaN at step 2") != std::string::npos &&
                 failed.result.message.find("adamw.eps 1e-08 is 0 in fp16") != std::string::npos &&
                 failed.result.message.find("set adamw.eps to 1e-4") != std::string::npos,
             failed.result.message.c_str());
    const auto warned = std::find_if(failed.logs.begin(), failed.logs.end(), [](const std::string& l) {
      return l.rfind("warning: mode fp16 divides by zero", 0) == 0;
    });
    QVERIFY(warned != failed.logs.end());
    QVERIFY(failed.steps.size() == 2 && std::isfinite(failed.steps[0].loss));  // step 1 trains, step 2 is NaN
    qInfo("%s", warned->c_str());
    c.adamw.eps = 1e-4;
    const Recorded trained = runAndRecord(c);
    QVERIFY2(trained.result.status == RunStatus::Completed, trained.result.message.c_str());
    for (const std::string& l : trained.logs) QVERIFY2(l.find("divides by zero") == std::string::npos, l.c_str());
  }

  // Step 1 from the same weights over seeds (the seed draws the batch):
  // fp16's unscaled gradients hold more exact zeros than fp16-mixed's scaled
  // ones, and fp16-mixed measures the share of its gradient that fp16 would
  // have flushed as > 0.
  void unscaledFp16LosesSmallGradients() {
    std::vector<double> plainZeros, mixedZeros, mixedFlush;
    for (uint64_t seed : {1, 2, 3, 4, 5}) {
      RunConfig plain = smallRun(OptimizerMode::Fp16Plain, 1), mixed = smallRun(OptimizerMode::Fp16Mixed, 1);
      plain.seed = mixed.seed = seed;
      const Recorded p = runAndRecord(plain), m = runAndRecord(mixed);
      QVERIFY(p.result.status == RunStatus::Completed && m.result.status == RunStatus::Completed);
      QVERIFY(!*m.steps[0].stepSkipped);
      plainZeros.push_back(*p.steps[0].gradFp16ZeroShare);
      mixedZeros.push_back(*m.steps[0].gradFp16ZeroShare);
      mixedFlush.push_back(*m.steps[0].gradFp16FlushShare);
      qInfo("seed %llu: exact zeros in the fp16 gradient: fp16 %.4f %%, fp16-mixed (scaled) %.4f %%; "
            "fp16-mixed's unscaled fp32 gradient flushing in fp16: %.4f %%",
            static_cast<unsigned long long>(seed), 100 * plainZeros.back(), 100 * mixedZeros.back(),
            100 * mixedFlush.back());
      QVERIFY(plainZeros.back() > mixedZeros.back());
      QVERIFY(mixedFlush.back() > 0);
    }
    const auto extra = plab::test::spreadOf([&] {
      std::vector<double> d;
      for (size_t i = 0; i < plainZeros.size(); ++i) d.push_back(plainZeros[i] - mixedZeros[i]);
      return d;
    }());
    qInfo("fp16's extra zero share over fp16-mixed: %.4f %% +- %.4f %%", 100 * extra.mean, 100 * extra.sd);
    QVERIFY(extra.mean > 3 * extra.sd / std::sqrt(double(plainZeros.size())));
  }
};

PLAB_TEST_APPLESS_MAIN(Fp16TrainingTest)
}  // namespace test_fp16_training
#include "test_fp16_training.moc"
