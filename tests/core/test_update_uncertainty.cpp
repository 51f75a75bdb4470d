// The per-layer update-lost figure's uncertainty (precision/update_stats.h):
// the standard error reported from one run's element groups agrees with
// the spread of the figure over independent seeds; the evidence rule hides a
// 64-element norm layer under stochastic rounding and keeps a large layer;
// the pending share of Kahan's buffer and mixed's master copy is reported
// apart from what is lost.
#include <QtTest/QtTest>

#include <cmath>
#include <map>
#include <vector>

#include "precision/precision_adamw.h"
#include "precision/update_stats.h"
#include "support/test_registry.h"

namespace test_update_uncertainty {

using namespace plab;

namespace {

constexpr int kWindow = 10;
constexpr int kWindows = 3;

// One seed's windows of a 64-element norm layer (weights near 1) and a
// 65536-element linear layer (weights ~ N(0, 0.02)), both bf16, under
// `mode` at `lr`. Gradients: a fixed direction per seed plus noise, so
// AdamW's updates keep a sign as in fine-tuning.
struct SeedWindows {
  std::vector<LayerWindowStats> norm, linear;
};

SeedWindows runSeed(OptimizerMode mode, double lr, uint64_t seed) {
  torch::manual_seed(seed);
  torch::Tensor norm = (1 + 0.05 * torch::randn({64})).to(torch::kBFloat16).set_requires_grad(true);
  torch::Tensor linear = (0.02 * torch::randn({256, 256})).to(torch::kBFloat16).set_requires_grad(true);
  const torch::Tensor normDir = torch::randn({64}), linearDir = torch::randn({256, 256});
  AdamWOptions o;
  o.weight_decay = 0;
  UpdateStatsOptions stats;
  stats.window = kWindow;
  PrecisionAdamW opt({{"norm.weight", "norm", norm, {}}, {"linear.weight", "linear", linear, {}}}, mode, o, seed,
                     stats);
  SeedWindows out;
  for (int k = 0; k < kWindow * kWindows; ++k) {
    norm.mutable_grad() = (normDir + 0.5 * torch::randn({64})).to(torch::kBFloat16);
    linear.mutable_grad() = (linearDir + 0.5 * torch::randn({256, 256})).to(torch::kBFloat16);
    for (const LayerWindowStats& w : opt.step(lr, false).window) (w.layer == "norm" ? out.norm : out.linear).push_back(w);
  }
  return out;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / double(v.size());
}

}  // namespace

class TestUpdateUncertainty : public QObject {
  Q_OBJECT
 private slots:
  // 8 seeds x 3 windows: the figure's spread over seeds, pooled over the
  // windows (3 x 7 = 21 degrees of freedom), against the root mean square
  // of the reported standard errors. For 21 degrees of freedom the sample
  // sd lies within 0.62..1.42 of the true one with 99 % probability; each
  // reported se comes from 16 groups (about +-18 % on its own, less in the
  // mean of 24), and the groups only approximate independent samples. The
  // ratio must lie within 0.5..2: a se off by more than a factor 2 fails.
  void stdErrorMatchesTheSpreadOverSeeds() {
    for (OptimizerMode mode : {OptimizerMode::Bf16StochasticRounding, OptimizerMode::Bf16Nearest}) {
      for (const bool small : {true, false}) {
        if (mode == OptimizerMode::Bf16Nearest && small) continue;  // the norm layer loses all: no spread at all
        std::vector<std::vector<double>> perWindow(kWindows);
        std::vector<double> seSq;
        for (uint64_t seed = 1; seed <= 8; ++seed) {
          const SeedWindows s = runSeed(mode, 1e-5, seed);
          const auto& windows = small ? s.norm : s.linear;
          QCOMPARE(int(windows.size()), kWindows);
          for (int w = 0; w < kWindows; ++w) {
            perWindow[size_t(w)].push_back(windows[size_t(w)].updateLost());
            seSq.push_back(std::pow(windows[size_t(w)].updateLostStdError(), 2));
          }
        }
        double ss = 0;
        int dof = 0;
        for (const auto& v : perWindow) {
          const double m = mean(v);
          for (double x : v) ss += (x - m) * (x - m);
          dof += int(v.size()) - 1;
        }
        const double sd = std::sqrt(ss / dof), se = std::sqrt(mean(seSq));
        qInfo("%-10s %-6s layer: spread over seeds %.4f, reported se %.4f, ratio %.2f", optimizerModeId(mode).c_str(),
              small ? "norm" : "linear", sd, se, sd / se);
        QVERIFY2(sd / se > 0.5 && sd / se < 2.0, qPrintable(QString("ratio %1").arg(sd / se)));
      }
    }
  }

  // Stochastic rounding at lr 1e-5: the 64-element norm layer's figure
  // swings by tens of points from seed to seed; its se says so and the rule
  // hides it in every window. The 65536-element layer's figure is kept.
  void evidenceRuleHidesSmallLayerNoiseKeepsLargeLayer() {
    for (uint64_t seed = 1; seed <= 5; ++seed) {
      const SeedWindows s = runSeed(OptimizerMode::Bf16StochasticRounding, 1e-5, seed);
      for (const LayerWindowStats& w : s.norm) {
        const LostEvidence e = lostEvidence(w.updateLostStdError(), w.trackedElements);
        QVERIFY2(!e.enough, qPrintable(QString("norm layer se %1").arg(w.updateLostStdError())));
        QVERIFY(QString::fromStdString(e.reason).contains("64 elements"));
      }
      for (const LayerWindowStats& w : s.linear) {
        QVERIFY2(lostEvidence(w.updateLostStdError(), w.trackedElements).enough,
                 qPrintable(QString("linear layer se %1").arg(w.updateLostStdError())));
        QVERIFY(std::abs(w.updateLost()) < 4 * w.updateLostStdError() + 1e-3);  // SR loses nothing on average
      }
    }
  }

  // Kahan at lr 1e-5 on weights near 1: most of each window's update still
  // waits in the buffer (pending), and is not counted as lost.
  void kahanPendingIsNotLost() {
    const SeedWindows s = runSeed(OptimizerMode::Bf16Kahan, 1e-5, 1);
    for (const LayerWindowStats& w : s.norm) {
      QVERIFY2(w.updatePending() > 0.3, qPrintable(QString("pending %1").arg(w.updatePending())));
      QVERIFY2(std::abs(w.updateLost()) < 0.02, qPrintable(QString("lost %1").arg(w.updateLost())));
      QVERIFY(lostEvidence(w.updateLostStdError(), w.trackedElements).enough);
    }
    // Without a buffer nothing is pending.
    for (const LayerWindowStats& w : runSeed(OptimizerMode::Bf16StochasticRounding, 1e-5, 1).norm)
      QCOMPARE(w.updatePending(), 0.0);
  }

  // Update noise, ||arrived + pending - intended|| / ||intended||: what
  // update lost (a mean projection) cannot show. On the 65536-element layer
  // at lr 1e-5 (updates below an ulp for most weights): mixed's fp32 master
  // delivers everything up to fp32 rounding (noise ~0); stochastic rounding
  // loses nothing on average yet delivers whole random ulps (noise far above
  // its update lost); Kahan's bf16 buffer adds a little. Never below |update
  // lost| (Cauchy-Schwarz: lost is the noise vector's projection on the
  // intended update). Measured, 3 seeds: mixed 0.0000, Kahan 0.0019, SR 0.9998
  // (lost 0.0016), nearest 0.94 (lost 0.84).
  void updateNoiseSeesWhatLostAveragesAway() {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      std::map<OptimizerMode, LayerWindowStats> last;
      for (OptimizerMode mode : {OptimizerMode::Fp32MasterWeights, OptimizerMode::Bf16Kahan,
                                 OptimizerMode::Bf16StochasticRounding, OptimizerMode::Bf16Nearest})
        last[mode] = runSeed(mode, 1e-5, seed).linear.back();
      for (const auto& [mode, w] : last) {
        qInfo("seed %d %-10s update lost %.4f, update noise %.4f, pending %.4f", int(seed),
              optimizerModeId(mode).c_str(), w.updateLost(), w.updateNoise(), w.updatePending());
        QVERIFY(w.updateNoise() >= std::abs(w.updateLost()) - 1e-12);
      }
      QVERIFY(last[OptimizerMode::Fp32MasterWeights].updateNoise() < 1e-3);
      const LayerWindowStats& sr = last[OptimizerMode::Bf16StochasticRounding];
      QVERIFY2(sr.updateNoise() > 0.5 && sr.updateNoise() > 20 * std::abs(sr.updateLost()),
               qPrintable(QString("sr noise %1 lost %2").arg(sr.updateNoise()).arg(sr.updateLost())));
      QVERIFY(last[OptimizerMode::Bf16Kahan].updateNoise() < 0.01);
      QVERIFY(last[OptimizerMode::Bf16Nearest].updateLost() > 0.5);
    }
  }

  // Mixed: the master copy holds what the bf16 copy has not received yet;
  // with it counted as pending, nothing is lost (the master is exact fp32).
  void mixedMasterCopyIsPendingNotLost() {
    const SeedWindows s = runSeed(OptimizerMode::Fp32MasterWeights, 1e-5, 1);
    for (const LayerWindowStats& w : s.norm) {
      QVERIFY2(w.updatePending() > 0.3, qPrintable(QString("pending %1").arg(w.updatePending())));
      QVERIFY2(std::abs(w.updateLost()) < 1e-3, qPrintable(QString("lost %1").arg(w.updateLost())));
    }
  }

  void evidenceRuleEdges() {
    QVERIFY(lostEvidence(std::nullopt, 0).enough);  // old run folders: no se, shown as before
    QVERIFY(lostEvidence(0.05, 1000).enough);
    QVERIFY(!lostEvidence(0.0501, 1000).enough);
    QVERIFY(!lostEvidence(INFINITY, 1).enough);
    QVERIFY(QString::fromStdString(lostEvidence(INFINITY, 1).reason).contains("too few"));
    QVERIFY(!lostEvidence(0.0, 100, /*intended=*/false).enough);
    LayerWindowStats one;
    one.trackedElements = 1;
    one.intendedSumSq = 1;
    QVERIFY(std::isinf(one.updateLostStdError()));
  }
};

PLAB_TEST_APPLESS_MAIN(TestUpdateUncertainty)
}  // namespace test_update_uncertainty
#include "test_update_uncertainty.moc"
