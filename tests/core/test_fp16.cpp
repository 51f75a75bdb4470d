// fp32 <-> fp16 (precision/kernels/fp16_bits.h) against LibTorch's own
// casts: every fp16 pattern, every rounding boundary, millions of random
// values; and the fp16 write counts against their tensor-op formulation.
#include <QtTest/QtTest>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "precision/fp16_counts.h"
#include "precision/kernels/fp16_bits.h"
#include "support/test_registry.h"

namespace test_fp16 {

using namespace plab;
using kernels::Fp16Write;

namespace {

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float value(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Elements where our fp32 -> fp16 differs from torch's cast of the same
// tensor. NaN: torch's cast writes the quiet NaN with the top payload bits
// on x86 (F16C) as we do; NaN payloads are no part of the contract, so a NaN
// only has to stay a NaN of the same sign.
int64_t differingFromTorch(const std::vector<float>& xs, QString* firstDifference) {
  const torch::Tensor x = torch::from_blob(const_cast<float*>(xs.data()), {static_cast<int64_t>(xs.size())}, torch::kFloat32);
  const torch::Tensor theirs = x.to(torch::kFloat16).view(torch::kInt16).contiguous();
  const int16_t* t = theirs.data_ptr<int16_t>();
  int64_t differing = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const uint16_t mine = kernels::fp16FromFloat(xs[i]);
    const auto their = static_cast<uint16_t>(t[i]);
    const bool bothNan = (mine & 0x7FFFu) > 0x7C00u && (their & 0x7FFFu) > 0x7C00u;
    const bool same = bothNan ? (mine & 0x8000u) == (their & 0x8000u) : mine == their;
    if (!same && differing++ == 0 && firstDifference)
      *firstDifference = QString("x bits 0x%1: ours 0x%2, torch 0x%3")
                             .arg(bits(xs[i]), 8, 16, QChar('0')).arg(mine, 4, 16, QChar('0')).arg(their, 4, 16, QChar('0'));
  }
  return differing;
}

std::vector<float> allFp16Values() {  // every non-NaN pattern, as fp32 (exact)
  std::vector<float> out;
  for (uint32_t h = 0; h < 0x10000u; ++h)
    if ((h & 0x7FFFu) <= 0x7C00u) out.push_back(kernels::fp16ToFloat(static_cast<uint16_t>(h)));
  return out;
}

// Every fp16 value, every midpoint between neighbours (the ties), and the
// fp32 values one ulp either side of each, with both signs; named edges; NaNs.
std::vector<float> boundaryValues() {
  const std::vector<float> grid = allFp16Values();
  std::vector<float> positive;
  for (float v : grid)
    if (!std::signbit(v) && std::isfinite(v)) positive.push_back(v);
  std::sort(positive.begin(), positive.end());
  std::vector<float> xs;
  auto withNeighbours = [&xs](float x) {
    for (float y : {std::nextafter(x, 0.0f), x, std::nextafter(x, std::numeric_limits<float>::infinity())})
      for (float s : {1.0f, -1.0f}) xs.push_back(s * y);
  };
  for (size_t i = 0; i + 1 < positive.size(); ++i) {
    withNeighbours(positive[i]);
    withNeighbours(static_cast<float>((static_cast<double>(positive[i]) + positive[i + 1]) / 2));  // exact in fp32
  }
  for (float x : {65504.0f, 65519.0f, 65520.0f, 65536.0f, 7e4f, 1e5f, 1e6f, std::numeric_limits<float>::max(),
                  std::numeric_limits<float>::infinity(), 0x1p-24f, 0x1p-25f, 0x3p-26f, 0x1p-26f, 0x1p-30f,
                  std::numeric_limits<float>::min(), std::numeric_limits<float>::denorm_min(), 0.0f,
                  0x1.ffcp-15f, 0x1p-14f})
    withNeighbours(x);
  for (uint32_t nan : {0x7FC00000u, 0x7F800001u, 0x7FFFFFFFu, 0x7FA00000u, 0xFFC00000u}) xs.push_back(value(nan));
  return xs;
}

Fp16Write classifyOne(float x) { return kernels::classifyFp16Write(x, kernels::fp16FromFloat(x)); }

}  // namespace

class Fp16Test : public QObject {
  Q_OBJECT
 private slots:
  void everyFp16PatternWidensAsTorchDoes() {
    torch::Tensor h = torch::arange(0, 0x10000, torch::kInt32).to(torch::kInt16).view(torch::kFloat16);
    const torch::Tensor theirs = h.to(torch::kFloat32).view(torch::kInt32).contiguous();
    const int16_t* hp = h.view(torch::kInt16).data_ptr<int16_t>();
    const int32_t* tp = theirs.data_ptr<int32_t>();
    int differing = 0, nans = 0;
    for (int i = 0; i < 0x10000; ++i) {
      const float mine = kernels::fp16ToFloat(static_cast<uint16_t>(hp[i]));
      const float their = value(static_cast<uint32_t>(tp[i]));
      if (std::isnan(their)) {
        ++nans;
        differing += !std::isnan(mine);
      } else {
        differing += bits(mine) != bits(their);
      }
    }
    QCOMPARE(nans, 2 * 1023);
    QCOMPARE(differing, 0);
  }

  void everyFp16ValueRoundTrips() {
    for (uint32_t h = 0; h < 0x10000u; ++h) {
      if ((h & 0x7FFFu) > 0x7C00u) continue;
      QCOMPARE(kernels::fp16FromFloat(kernels::fp16ToFloat(static_cast<uint16_t>(h))), static_cast<uint16_t>(h));
    }
  }

  void roundingBoundariesMatchTorch() {
    const std::vector<float> xs = boundaryValues();
    QString first;
    QCOMPARE(differingFromTorch(xs, &first), int64_t{0});
    QVERIFY2(first.isEmpty(), qPrintable(first));
  }

  void namedBoundaries() {
    QCOMPARE(kernels::fp16FromFloat(65504.0f), uint16_t{0x7BFF});
    QCOMPARE(kernels::fp16FromFloat(std::nextafter(65520.0f, 0.0f)), uint16_t{0x7BFF});
    QCOMPARE(kernels::fp16FromFloat(65520.0f), uint16_t{0x7C00});  // the tie goes to even: Inf
    QCOMPARE(kernels::fp16FromFloat(-65520.0f), uint16_t{0xFC00});
    QCOMPARE(kernels::fp16FromFloat(0x1p-24f), uint16_t{0x0001});   // smallest subnormal
    QCOMPARE(kernels::fp16FromFloat(0x1p-25f), uint16_t{0x0000});   // tie with 0: even
    QCOMPARE(kernels::fp16FromFloat(std::nextafter(0x1p-25f, 1.0f)), uint16_t{0x0001});
    QCOMPARE(kernels::fp16FromFloat(0x3p-25f), uint16_t{0x0002});   // tie between 1 and 2 units: even
    QCOMPARE(kernels::fp16FromFloat(-0.0f), uint16_t{0x8000});
    QCOMPARE(kernels::fp16FromFloat(value(0x7FC00000u)), uint16_t{0x7E00});
  }

  // A few million random values: all fp32 bit patterns, and log-uniform
  // magnitudes over fp16's range, where every rule is exercised.
  void randomValuesMatchTorch() {
    for (int64_t seed : {1, 2, 3}) {
      torch::manual_seed(seed);
      const torch::Tensor patterns = torch::randint(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(),
                                                    {1 << 20}, torch::kInt64)
                                         .to(torch::kInt32)
                                         .view(torch::kFloat32);
      const torch::Tensor sign = torch::where(torch::rand({1 << 20}) < 0.5, -1.0, 1.0);
      const torch::Tensor logUniform = sign * torch::exp2(torch::rand({1 << 20}) * 46 - 30);  // 2^-30 .. 2^16
      for (const torch::Tensor& t : {patterns, logUniform.to(torch::kFloat32)}) {
        const torch::Tensor c = t.contiguous();
        std::vector<float> xs(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
        QString first;
        QCOMPARE(differingFromTorch(xs, &first), int64_t{0});
      }
    }
  }

  void classification() {
    QCOMPARE(classifyOne(1.0f), Fp16Write::Exact);
    QCOMPARE(classifyOne(0x1p-24f), Fp16Write::Exact);
    QCOMPARE(classifyOne(0.1f), Fp16Write::Rounded);
    QCOMPARE(classifyOne(0x1.8p-24f), Fp16Write::Rounded);  // to a subnormal
    QCOMPARE(classifyOne(0x1p-25f), Fp16Write::FlushedToZero);
    QCOMPARE(classifyOne(-1e-30f), Fp16Write::FlushedToZero);
    QCOMPARE(classifyOne(std::numeric_limits<float>::denorm_min()), Fp16Write::FlushedToZero);
    QCOMPARE(classifyOne(std::nextafter(0x1p-25f, 1.0f)), Fp16Write::Rounded);
    QCOMPARE(classifyOne(65504.0f), Fp16Write::Exact);
    QCOMPARE(classifyOne(65519.0f), Fp16Write::Rounded);
    QCOMPARE(classifyOne(65520.0f), Fp16Write::Overflowed);
    QCOMPARE(classifyOne(-3e38f), Fp16Write::Overflowed);
    QCOMPARE(classifyOne(0.0f), Fp16Write::Exact);
    QCOMPARE(classifyOne(-0.0f), Fp16Write::Exact);
    QCOMPARE(classifyOne(std::numeric_limits<float>::infinity()), Fp16Write::Exact);
    QCOMPARE(classifyOne(std::nanf("")), Fp16Write::Exact);
  }

  // The counting loop's magnitude tests give classifyFp16Write's answers.
  void magnitudeTestsAgreeWithClassification() {
    std::vector<float> xs = boundaryValues();
    torch::manual_seed(4);
    const torch::Tensor patterns = torch::randint(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(),
                                                  {1 << 20}, torch::kInt64).to(torch::kInt32).view(torch::kFloat32);
    xs.insert(xs.end(), patterns.data_ptr<float>(), patterns.data_ptr<float>() + patterns.numel());
    int64_t flushes = 0, overflows = 0;
    for (float x : xs) {
      const uint32_t magnitude = bits(x) & 0x7FFFFFFFu;
      const Fp16Write w = classifyOne(x);
      QCOMPARE(kernels::fp16FlushesToZero(magnitude), w == Fp16Write::FlushedToZero);
      QCOMPARE(kernels::fp16Overflows(magnitude), w == Fp16Write::Overflowed);
      flushes += w == Fp16Write::FlushedToZero;
      overflows += w == Fp16Write::Overflowed;
    }
    QVERIFY(flushes > 1000 && overflows > 1000);
  }

  void writeCountsByHand() {
    const float inf = std::numeric_limits<float>::infinity();
    const torch::Tensor x = torch::tensor({1.0f, 0.0f, -0.0f, 1e-8f, -1e-9f, 0x1p-25f, 7e4f, -1e5f, inf, std::nanf(""), 0.1f});
    const Fp16WriteCounts c = fp16WriteCounts(x);
    QCOMPARE(c.elements, int64_t{11});
    QCOMPARE(c.nonZeroFinite, int64_t{7});
    QCOMPARE(c.flushedToZero, int64_t{3});
    QCOMPARE(c.overflowed, int64_t{2});
    QCOMPARE(c.nonFinite, int64_t{2});
    QCOMPARE(c.flushedShare(), 3.0 / 7.0);
    QCOMPARE(fp16WriteCounts(torch::zeros({0})).flushedShare(), 0.0);
  }

  // The fused CPU pass against the tensor-op formulation (torch's own cast),
  // over seeds, shapes that are not whole blocks, bf16 and strided input.
  void writeCountsMatchTensorOps() {
    for (int64_t seed : {1, 2, 3}) {
      torch::manual_seed(seed);
      const torch::Tensor g = torch::randn({300, 171}) * torch::exp2(torch::randint(-40, 20, {300, 1}).to(torch::kFloat32));
      g.view(-1).index_put_({torch::randint(0, g.numel(), {50})}, std::numeric_limits<float>::infinity());
      g.view(-1).index_put_({torch::randint(0, g.numel(), {50})}, 0.0f);
      for (const torch::Tensor& t : {g, g.to(torch::kBFloat16), g.t(), g.slice(1, 3, 100, 2)}) {
        const Fp16WriteCounts a = fp16WriteCounts(t), b = fp16WriteCountsByTensorOps(t);
        QCOMPARE(a.elements, b.elements);
        QCOMPARE(a.nonZeroFinite, b.nonZeroFinite);
        QCOMPARE(a.flushedToZero, b.flushedToZero);
        QCOMPARE(a.overflowed, b.overflowed);
        QCOMPARE(a.nonFinite, b.nonFinite);
        QVERIFY(a.flushedToZero > 0 && a.overflowed > 0);
      }
    }
  }

  void writeCountsRefuseOtherTypes() {
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, fp16WriteCounts(torch::zeros({3}, torch::kFloat16)));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, fp16WriteCounts(torch::zeros({3}, torch::kInt32)));
  }
};

PLAB_TEST_APPLESS_MAIN(Fp16Test)
}  // namespace test_fp16
#include "test_fp16.moc"
