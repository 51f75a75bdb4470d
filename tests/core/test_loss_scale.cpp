// DynamicLossScale (precision/loss_scale): GradScaler's rules written out
// here independently of the ATen ops it calls (backoff, growth every
// interval, no growth past fp32, inv_scale from the fp64 reciprocal), the
// once-per-step contract, and the JSON state. Bit-exactness against
// torch.amp.GradScaler itself: tests/reference/grad_scaler_vs_torch.py.
#include <QtTest/QtTest>
#include <torch/torch.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "precision/loss_scale/dynamic_loss_scale.h"
#include "support/test_registry.h"
#include "util/errors.h"

namespace test_loss_scale {

using namespace plab;

namespace {

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

std::vector<torch::Tensor> cleanGrads() { return {torch::randn({5, 3}), torch::randn({7})}; }
std::vector<torch::Tensor> gradsWith(float bad) {
  std::vector<torch::Tensor> g = cleanGrads();
  g[1][4] = bad;
  return g;
}

// One training step's scaler calls; returns whether the step was skipped.
bool step(DynamicLossScale& s, const std::vector<torch::Tensor>& grads) {
  s.unscale(grads);
  const bool skip = s.shouldSkipStep();
  s.update();
  return skip;
}

}  // namespace

class LossScaleTest : public QObject {
  Q_OBJECT
 private slots:
  void defaultsAreGradScalers() {
    DynamicLossScale s;
    QCOMPARE(s.scale(), 65536.0f);
    QCOMPARE(s.growthTracker(), 0);
    QCOMPARE(s.config().growthFactor, 2.0);
    QCOMPARE(s.config().backoffFactor, 0.5);
    QCOMPARE(s.config().growthInterval, int64_t{2000});
  }

  void growsEveryIntervalAndBacksOffOnInfOrNan() {
    torch::manual_seed(1);
    DynamicLossScale s({1024.0, 2.0, 0.5, 3});
    QVERIFY(!step(s, cleanGrads()));
    QVERIFY(!step(s, cleanGrads()));
    QCOMPARE(s.growthTracker(), 2);
    QCOMPARE(s.scale(), 1024.0f);
    QVERIFY(!step(s, cleanGrads()));  // the third clean step in a row grows
    QCOMPARE(s.scale(), 2048.0f);
    QCOMPARE(s.growthTracker(), 0);
    QVERIFY(!step(s, cleanGrads()));
    QVERIFY(step(s, gradsWith(std::numeric_limits<float>::infinity())));
    QCOMPARE(s.scale(), 1024.0f);
    QCOMPARE(s.growthTracker(), 0);
    QVERIFY(step(s, gradsWith(std::nanf(""))));
    QVERIFY(step(s, gradsWith(-std::numeric_limits<float>::infinity())));
    QCOMPARE(s.scale(), 256.0f);
  }

  // _amp_update_scale_: backoff float(scale * double backoff), growth
  // float(scale * double growth) kept only when finite.
  void oddFactorsRoundAsTorch() {
    torch::manual_seed(2);
    const double growth = 1.37, backoff = 0.29;
    DynamicLossScale s({1000.0, growth, backoff, 1});
    float expected = 1000.0f;
    for (int i = 0; i < 6; ++i) {
      const bool bad = i % 3 == 2;
      QCOMPARE(step(s, bad ? gradsWith(std::nanf("")) : cleanGrads()), bad);
      expected = static_cast<float>(static_cast<double>(expected) * (bad ? backoff : growth));
      QCOMPARE(bits(s.scale()), bits(expected));
    }
  }

  void neverGrowsPastFp32() {
    DynamicLossScale s({0x1p127, 2.0, 0.5, 1});
    QVERIFY(!step(s, cleanGrads()));
    QCOMPARE(s.scale(), 0x1p127f);
    QCOMPARE(s.growthTracker(), 0);
  }

  // inv_scale = float(1 / double(scale)); each gradient times it (fp32).
  void unscaleMultipliesByTheRoundedReciprocal() {
    torch::manual_seed(3);
    DynamicLossScale s({3.0, 2.0, 0.5, 2000});
    const torch::Tensor g = torch::randn({1000}) * 100;
    const torch::Tensor before = g.clone();
    QVERIFY(!s.unscale({g}));
    const float inv = static_cast<float>(1.0 / 3.0);
    QVERIFY(torch::equal(g, before * inv));
    QVERIFY(!torch::equal(g, before / 3.0f));  // the rounded reciprocal, not a division
    const torch::Tensor b = (torch::randn({64}) * 3).to(torch::kBFloat16);
    const torch::Tensor bBefore = b.clone();
    s.update();
    QVERIFY(!s.unscale({b, torch::Tensor()}));  // undefined gradients are left out, as None grads
    QVERIFY(torch::equal(b, (bBefore.to(torch::kFloat32) * inv).to(torch::kBFloat16)));
  }

  void scaleLossMultipliesByTheScale() {
    DynamicLossScale s({1000.0, 2.0, 0.5, 5});
    const torch::Tensor loss = torch::tensor(0.123f);
    QCOMPARE(s.scaleLoss(loss).item<float>(), 0.123f * 1000.0f);
  }

  void oncePerStep() {
    DynamicLossScale s;
    QVERIFY_THROWS_EXCEPTION(std::logic_error, s.update());
    QVERIFY_THROWS_EXCEPTION(std::logic_error, s.shouldSkipStep());
    s.unscale(cleanGrads());
    QVERIFY_THROWS_EXCEPTION(std::logic_error, s.unscale(cleanGrads()));
    s.update();
    QVERIFY_THROWS_EXCEPTION(std::logic_error, s.update());
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, s.unscale({torch::zeros({3}, torch::kFloat16)}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, s.unscale({}));
  }

  void updateWithAGivenFlag() {
    DynamicLossScale s({64.0, 2.0, 0.5, 2});
    s.update(true);
    QCOMPARE(s.scale(), 32.0f);
    s.update(false);
    s.update(false);
    QCOMPARE(s.scale(), 64.0f);
  }

  void refusesWhatGradScalerRefuses() {
    QVERIFY_THROWS_EXCEPTION(ConfigError, DynamicLossScale({65536.0, 1.0, 0.5, 2000}));
    QVERIFY_THROWS_EXCEPTION(ConfigError, DynamicLossScale({65536.0, 2.0, 1.0, 2000}));
    QVERIFY_THROWS_EXCEPTION(ConfigError, DynamicLossScale({65536.0, 2.0, 0.0, 2000}));
    QVERIFY_THROWS_EXCEPTION(ConfigError, DynamicLossScale({65536.0, 2.0, 0.5, 0}));
    QVERIFY_THROWS_EXCEPTION(ConfigError, DynamicLossScale({0.1, 2.0, 0.5, 2000}));  // not an fp32 value
    QVERIFY_THROWS_EXCEPTION(ConfigError, DynamicLossScale({0.0, 2.0, 0.5, 2000}));
  }

  // The state restores the exact scale and tracker, and the restored scaler
  // continues as the original.
  void jsonStateRoundTrips() {
    torch::manual_seed(4);
    DynamicLossScale a({1000.0, 1.37, 0.29, 4});
    step(a, cleanGrads());
    step(a, gradsWith(std::nanf("")));
    step(a, cleanGrads());
    step(a, cleanGrads());
    const nlohmann::json j = nlohmann::json::parse(a.toJson().dump());
    DynamicLossScale b = DynamicLossScale::fromJson(j);
    QCOMPARE(bits(b.scale()), bits(a.scale()));
    QCOMPARE(b.growthTracker(), 2);
    for (int i = 0; i < 5; ++i) {
      const auto g = i == 3 ? gradsWith(std::numeric_limits<float>::infinity()) : cleanGrads();
      std::vector<torch::Tensor> g2;
      for (const auto& t : g) g2.push_back(t.clone());
      QCOMPARE(step(a, g), step(b, g2));
      QCOMPARE(bits(b.scale()), bits(a.scale()));
      QCOMPARE(b.growthTracker(), a.growthTracker());
    }
  }

  void jsonStateIsChecked() {
    const nlohmann::json good = DynamicLossScale().toJson();
    for (const char* key : {"scale", "growth_tracker", "growth_factor", "backoff_factor", "growth_interval"}) {
      nlohmann::json j = good;
      j.erase(key);
      QVERIFY_THROWS_EXCEPTION(ConfigError, DynamicLossScale::fromJson(j));
    }
    nlohmann::json j = good;
    j["extra"] = 1;
    QVERIFY_THROWS_EXCEPTION(ConfigError, DynamicLossScale::fromJson(j));
    j = good;
    j["scale"] = 0.1;
    QVERIFY_THROWS_EXCEPTION(ConfigError, DynamicLossScale::fromJson(j));
    j = good;
    j["scale"] = -1.0;
    QVERIFY_THROWS_EXCEPTION(ConfigError, DynamicLossScale::fromJson(j));
    j = good;
    j["growth_tracker"] = 2000;
    QVERIFY_THROWS_EXCEPTION(ConfigError, DynamicLossScale::fromJson(j));
    j = good;
    j["scale"] = 0.0;  // backed off to zero: a state GradScaler reaches
    QCOMPARE(DynamicLossScale::fromJson(j).scale(), 0.0f);
  }
};

PLAB_TEST_APPLESS_MAIN(LossScaleTest)
}  // namespace test_loss_scale
#include "test_loss_scale.moc"
