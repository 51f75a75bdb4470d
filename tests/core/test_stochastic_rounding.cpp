// fp32 -> bf16 rounding: stochastic rounding is unbiased and only ever picks
// one of the two bf16 neighbours; round-to-nearest matches an independent
// bit-level reference.
#include <QtTest/QtTest>
#include <torch/torch.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "precision/bf16_rounding.h"
#include "support/test_registry.h"

namespace test_stochastic_rounding {

using namespace plab;

namespace {

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
// The bf16 neighbours of a finite x: truncation toward zero and one bf16 ulp
// further from zero.
float lowerNeighbour(float x) { return floatOf(bitsOf(x) & 0xFFFF0000u); }
float upperNeighbour(float x) { return floatOf((bitsOf(x) & 0xFFFF0000u) + 0x10000u); }

// Scalar round-to-nearest-even, written from the bf16 definition.
float nearestReference(float x) {
  const uint32_t u = bitsOf(x);
  const uint32_t lsb = (u >> 16) & 1u;
  return floatOf((u + 0x7FFFu + lsb) & 0xFFFF0000u);
}

// With the bits the optimizer draws: the Philox stream of `seed`.
torch::Tensor stochastic(const torch::Tensor& x, uint64_t seed) {
  kernels::RandomStream stream;
  stream.seed = seed;
  stream.step = 1;
  return roundToBf16Stochastic(x, philoxRandom16(x.numel(), stream, torch::kCPU)).to(torch::kFloat32);
}

}  // namespace

class StochasticRoundingTest : public QObject {
  Q_OBJECT
 private slots:
  void exactBf16ValuesAreUnchanged() {
    torch::manual_seed(1);
    const torch::Tensor exact = (torch::randn({4096}) * 100).to(torch::kBFloat16).to(torch::kFloat32);
    QVERIFY(torch::equal(stochastic(exact, 7), exact));
  }

  void resultIsAlwaysOneOfTheTwoNeighbours() {
    torch::manual_seed(2);
    const torch::Tensor x = torch::cat({torch::randn({20000}) * 3, torch::randn({2000}) * 1e-30f});
    const torch::Tensor r = stochastic(x, 3);
    auto xa = x.accessor<float, 1>();
    auto ra = r.accessor<float, 1>();
    int64_t up = 0;
    for (int64_t i = 0; i < x.numel(); ++i) {
      const float lo = lowerNeighbour(xa[i]), hi = upperNeighbour(xa[i]);
      if (ra[i] != lo && ra[i] != hi)
        QFAIL(qPrintable(QString("x=%1 rounded to %2, neighbours %3 / %4").arg(xa[i]).arg(ra[i]).arg(lo).arg(hi)));
      if (ra[i] == hi && lo != hi) ++up;
    }
    // Both directions occur (not a disguised deterministic rounding).
    QVERIFY(up > x.numel() / 4 && up < 3 * x.numel() / 4);
  }

  void meanOfManySamplesIsTheInput_data() {
    QTest::addColumn<float>("lower");
    QTest::addColumn<double>("fraction");
    QTest::newRow("1 + 0.3 ulp") << 1.0f << 0.3;
    QTest::newRow("1 + 0.01 ulp") << 1.0f << 0.01;
    QTest::newRow("3.5 + 0.9 ulp") << 3.5f << 0.9;
    QTest::newRow("-2 - 0.5 ulp") << -2.0f << 0.5;
    QTest::newRow("1e-3 + 0.7 ulp") << lowerNeighbour(1e-3f) << 0.7;
  }
  void meanOfManySamplesIsTheInput() {
    QFETCH(float, lower);
    QFETCH(double, fraction);
    const float upper = upperNeighbour(lower);
    const double ulp = static_cast<double>(upper) - lower;  // signed: upper is further from zero
    const float x = static_cast<float>(lower + fraction * ulp);
    const int64_t n = 200000;
    const torch::Tensor r = stochastic(torch::full({n}, x), 11).to(torch::kFloat64);
    const double mean = r.mean().item<double>();
    // Bernoulli(fraction) on a grid of spacing ulp.
    const double p = (static_cast<double>(x) - lower) / ulp;
    const double standardError = std::abs(ulp) * std::sqrt(p * (1 - p) / n);
    const double error = std::abs(mean - x);
    qInfo("x=%.9g mean=%.9g |error|=%.3g standard error=%.3g", x, mean, error, standardError);
    QVERIFY2(error < 5 * standardError + 1e-12 * std::abs(x), "stochastic rounding is biased");
  }

  void nanAndInfinityPassThrough() {
    const float inf = std::numeric_limits<float>::infinity();
    const torch::Tensor x = torch::tensor({inf, -inf, std::nanf(""), 1.0f});
    const torch::Tensor r = stochastic(x, 5);
    auto a = r.accessor<float, 1>();
    QCOMPARE(a[0], inf);
    QCOMPARE(a[1], -inf);
    QVERIFY(std::isnan(a[2]));
    QCOMPARE(a[3], 1.0f);
  }

  void sameSeedSameResultOtherSeedDifferent() {
    torch::manual_seed(4);
    const torch::Tensor x = torch::randn({10000});
    QVERIFY(torch::equal(stochastic(x, 42), stochastic(x, 42)));
    QVERIFY(!torch::equal(stochastic(x, 42), stochastic(x, 43)));
  }

  void nearestMatchesBitReferenceAndTorch() {
    torch::manual_seed(5);
    torch::Tensor x = torch::randn({50000}) * 10;
    // Exact ties between two bf16 values: round-half-to-even matters here.
    const torch::Tensor ties = (torch::randn({1000}).to(torch::kBFloat16).to(torch::kFloat32).view(torch::kInt32) +
                                0x8000).view(torch::kFloat32);
    x = torch::cat({x, ties});
    const torch::Tensor r = roundToBf16Nearest(x);
    QCOMPARE(r.scalar_type(), torch::kBFloat16);
    QVERIFY(torch::equal(r, x.to(torch::kBFloat16)));
    const torch::Tensor r32 = r.to(torch::kFloat32);
    auto xa = x.accessor<float, 1>();
    auto ra = r32.accessor<float, 1>();
    for (int64_t i = 0; i < x.numel(); ++i)
      if (ra[i] != nearestReference(xa[i]))
        QFAIL(qPrintable(QString("nearest(%1) = %2, reference %3").arg(xa[i]).arg(ra[i]).arg(nearestReference(xa[i]))));
  }

  void rejectsNonFloatInput() {
    QVERIFY_THROWS_EXCEPTION(std::exception,
                             roundToBf16Stochastic(torch::zeros({3}, torch::kFloat64), torch::zeros({3}, torch::kInt32)));
  }
};

PLAB_TEST_APPLESS_MAIN(StochasticRoundingTest)
}  // namespace test_stochastic_rounding
#include "test_stochastic_rounding.moc"
