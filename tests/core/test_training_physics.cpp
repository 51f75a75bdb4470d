// The effect the product is about, on the default experiment (fine-tuning the
// embedded pretrained tiny GPT-2 at lr 5e-5, every parameter in bf16) over
// three seeds. Measured on the checkpoint f93ee2e2 (seeds 1-3, mean +- sd):
//   fp32 val loss 1.9383 +- 0.0017; bf16 +0.055, bf16-nearest +0.054,
//   bf16-kahan +0.0004, bf16-sr +0.0000, mixed +0.0001 (vs fp32);
//   update lost: bf16 88.8 %, kahan/sr/mixed |.| < 0.1 %, fp32 0.
// The assertions are the requirements with the spread measured here:
// plain bf16 behind fp32 by >= 0.05 nats and >= 5x fp32's seed-to-seed spread,
// and beyond noise paired seed by seed; Kahan, SR and mixed within that
// spread of fp32, their paired interval within 5 % of plain bf16's gap.
#include <QtTest/QtTest>

#include <cmath>
#include <map>

#include "report/paired_gap.h"
#include "support/test_registry.h"
#include "train/trainer.h"
#include "support/seed_spread.h"

namespace test_training_physics {

using namespace plab;
using plab::test::Spread;
using plab::test::spreadOf;

namespace {

const std::vector<uint64_t> kSeeds = {1, 2, 3};

RunRecord train(OptimizerMode mode, uint64_t seed) {
  RunRecord record;
  record.config = defaultRunConfig();
  RunConfig& c = record.config;
  c.name = "physics-" + optimizerModeId(mode) + "-s" + std::to_string(seed);
  c.mode = mode;
  c.seed = seed;
  c.eval_every = 0;  // evaluate at the end only
  c.device = "cpu";
  Trainer t(c);
  Trainer::Callbacks cb;
  cb.onStep = [&](const StepMetrics& m) { record.steps.push_back(m); };
  record.result = t.run(cb);
  const RunResult& r = record.result;
  if (r.status != RunStatus::Completed || !r.finalValLoss || !r.meanUpdateLost)
    qFatal("run %s failed: %s", c.name.c_str(), r.message.c_str());
  return record;
}


}  // namespace

class TestTrainingPhysics : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    for (uint64_t seed : kSeeds)
      for (OptimizerMode m : allOptimizerModes()) {
        runs_.push_back(train(m, seed));
        val_[m].push_back(*runs_.back().result.finalValLoss);
        lost_[m].push_back(*runs_.back().result.meanUpdateLost);
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

  // Paired over seeds (each run minus its own seed's fp32 twin, what the
  // verdicts show): plain bf16's gap is beyond seed noise, and the fixes
  // recover at least 95 % of it (their whole 95 % interval below 5 % of
  // plain bf16's gap). Whether their small remainder is beyond noise is what
  // the verdict reports, not a requirement.
  void pairedGapsOverSeeds() {
    const auto gapOf = [&](OptimizerMode m) {
      for (size_t i = 0; i < runs_.size(); ++i)
        if (runs_[i].config.mode == m) return report::pairedGap(runs_, i);
      return std::optional<report::PairedGap>();
    };
    const auto plain = gapOf(OptimizerMode::Bf16Plain);
    QVERIFY(plain && plain->total.pairs == int(kSeeds.size()));
    QVERIFY(plain->total.beyondNoise() && plain->total.ciLow > 0);
    for (OptimizerMode m : {OptimizerMode::Bf16Kahan, OptimizerMode::Bf16StochasticRounding,
                            OptimizerMode::Fp32MasterWeights}) {
      const auto gap = gapOf(m);
      QVERIFY(gap && gap->total.pairs == int(kSeeds.size()));
      qInfo("%-13s paired gap %+.5f (95 %% CI %+.5f to %+.5f)", optimizerModeId(m).c_str(), gap->total.mean,
            gap->total.ciLow, gap->total.ciHigh);
      QVERIFY2(std::abs(gap->total.ciHigh) < 0.05 * plain->total.mean &&
                   std::abs(gap->total.ciLow) < 0.05 * plain->total.mean,
               optimizerModeId(m).c_str());
      if (m != OptimizerMode::Fp32MasterWeights) {
        // The compute share is mixed's gap on the same seeds.
        QVERIFY(gap->compute && gap->compute->pairs == int(kSeeds.size()));
        QVERIFY(std::abs(gap->compute->mean - gapOf(OptimizerMode::Fp32MasterWeights)->total.mean) < 1e-12);
      }
    }
  }

  void fp32LosesNothing() {
    for (double v : lost_[OptimizerMode::Fp32AdamW]) QCOMPARE(v, 0.0);
  }

 private:
  std::vector<RunRecord> runs_;
  std::map<OptimizerMode, std::vector<double>> val_, lost_;
  Spread fp32_;
};

PLAB_TEST_GUILESS_MAIN(TestTrainingPhysics)
}  // namespace test_training_physics
#include "test_training_physics.moc"
