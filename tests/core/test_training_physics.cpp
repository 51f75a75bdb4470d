// The effect the product is about, on the default experiment (fine-tuning the
// embedded pretrained tiny GPT-2 at lr 5e-5, every parameter in bf16) over
// three seeds. Measured when this test was written (seeds 1-3, mean +- sd):
//   fp32 val loss 1.9391 +- 0.0014; bf16 +0.060, bf16-nearest +0.059,
//   bf16-kahan +0.0004, bf16-sr +0.0003, mixed +0.0002 (vs fp32);
//   update lost: bf16 88.6 %, kahan/sr/mixed |.| < 0.3 %, fp32 0.
// The assertions are the requirements with the spread measured here:
// plain bf16 behind fp32 by >= 0.05 nats and >= 5x fp32's seed-to-seed spread;
// Kahan, SR and mixed within that spread of fp32.
#include <QtTest/QtTest>

#include <cmath>
#include <map>

#include "train/trainer.h"
#include "support/seed_spread.h"

using namespace plab;
using plab::test::Spread;
using plab::test::spreadOf;

namespace {

const std::vector<uint64_t> kSeeds = {1, 2, 3};

struct Outcome {
  double valLoss = 0;
  double updateLost = 0;
};

Outcome train(OptimizerMode mode, uint64_t seed) {
  RunConfig c = defaultRunConfig();
  c.name = "physics-" + optimizerModeId(mode);
  c.mode = mode;
  c.seed = seed;
  c.eval_every = 0;  // evaluate at the end only
  c.device = "cpu";
  Trainer t(c);
  const RunResult r = t.run({});
  if (r.status != RunStatus::Completed || !r.finalValLoss || !r.meanUpdateLost)
    qFatal("run %s failed: %s", c.name.c_str(), r.message.c_str());
  return {*r.finalValLoss, *r.meanUpdateLost};
}


}  // namespace

class TestTrainingPhysics : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    for (uint64_t seed : kSeeds)
      for (OptimizerMode m : allOptimizerModes()) {
        const Outcome o = train(m, seed);
        val_[m].push_back(o.valLoss);
        lost_[m].push_back(o.updateLost);
      }
    fp32_ = spreadOf(val_[OptimizerMode::Fp32AdamW]);
    for (OptimizerMode m : allOptimizerModes()) {
      const Spread v = spreadOf(val_[m]), l = spreadOf(lost_[m]);
      qInfo("%-13s val loss %.4f +- %.4f (%+.4f vs fp32)  update lost %6.2f%% +- %.2f", optimizerModeId(m).c_str(),
            v.mean, v.sd, v.mean - fp32_.mean, 100 * l.mean, 100 * l.sd);
    }
  }

  void plainBf16IsClearlyBehind() {
    for (OptimizerMode m : {OptimizerMode::Bf16Plain, OptimizerMode::Bf16Nearest}) {
      const double gap = spreadOf(val_[m]).mean - fp32_.mean;
      QVERIFY2(gap >= 0.05, (optimizerModeId(m) + " gap " + std::to_string(gap)).c_str());
      QVERIFY2(gap >= 5 * fp32_.sd, (optimizerModeId(m) + " gap " + std::to_string(gap) + " vs spread " +
                                     std::to_string(fp32_.sd)).c_str());
      QVERIFY(spreadOf(lost_[m]).mean > 0.5);
    }
  }

  void fixesTrackFp32WithinTheSeedSpread() {
    for (OptimizerMode m : {OptimizerMode::Bf16Kahan, OptimizerMode::Bf16StochasticRounding,
                            OptimizerMode::Fp32MasterWeights}) {
      const double diff = spreadOf(val_[m]).mean - fp32_.mean;
      QVERIFY2(std::abs(diff) <= fp32_.sd, (optimizerModeId(m) + " differs by " + std::to_string(diff) +
                                            ", fp32 spread " + std::to_string(fp32_.sd)).c_str());
      QVERIFY2(std::abs(spreadOf(lost_[m]).mean) < 0.02, optimizerModeId(m).c_str());
    }
  }

  void fp32LosesNothing() {
    for (double v : lost_[OptimizerMode::Fp32AdamW]) QCOMPARE(v, 0.0);
  }

 private:
  std::map<OptimizerMode, std::vector<double>> val_, lost_;
  Spread fp32_;
};

QTEST_GUILESS_MAIN(TestTrainingPhysics)
#include "test_training_physics.moc"
