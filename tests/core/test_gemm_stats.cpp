// The precision-debugger statistics of quantized GEMM operands
// (formats/gemm_stats.h): underflow, saturation, dynamic range, relative
// error and scale range on operands worked out by hand; the collector keeps
// one entry per layer and role per armed step; a run with a low-precision
// GEMM format writes them to metrics.jsonl ("gemm_layers") on its statistics
// steps, a bf16 run's file has no such key.
#include <QtTest/QtTest>

#include <QTemporaryDir>
#include <cmath>
#include <fstream>
#include <limits>

#include "formats/gemm_stats.h"
#include "model/quantized_linear.h"
#include "support/small_runs.h"
#include "support/test_registry.h"
#include "train/step_metrics.h"
#include "train/trainer.h"

namespace test_gemm_stats {

using namespace plab;

namespace {

GemmOperandStats measure(const torch::Tensor& x, GemmFormat f, GemmRole r) {
  return measureQuantizedOperand(x, quantizeDequantize(x, f, r), f, r);
}

double relError(const torch::Tensor& x, GemmFormat f, GemmRole r) {
  const torch::Tensor q = quantizeDequantize(x, f, r).values;
  return ((q - x).norm() / x.norm()).item<double>();
}

}  // namespace

class GemmStatsTest : public QObject {
  Q_OBJECT
 private slots:
  void fp8PerTensorByHand() {
    // scale 448 / 1000: 1e-6 lands far below e4m3's smallest subnormal 2^-9.
    const torch::Tensor x = torch::tensor({{1000.0f, 1e-6f, 0.0f, -3.0f}});
    const GemmOperandStats s = measure(x, GemmFormat::Fp8E4m3, GemmRole::Input);
    QCOMPARE(s.underflow, 1.0 / 3.0);
    QCOMPARE(s.saturation, 0.0);  // current scaling maps amax to 448: never clamped
    QVERIFY(std::abs(s.dynamicRangeLog2 - std::log2(1000.0 / double(1e-6f))) < 1e-6);
    QVERIFY(std::abs(s.relError - relError(x, GemmFormat::Fp8E4m3, GemmRole::Input)) < 1e-6);
    const double scale = std::log2(1.0 / double(quantizeDequantize(x, GemmFormat::Fp8E4m3, GemmRole::Input)
                                                     .tensorScale.item<float>()));
    QCOMPARE(s.scaleLog2Min, scale);
    QCOMPARE(s.scaleLog2Max, scale);
  }

  void mxfp4SaturatesUnderFloorScaling() {
    // One 32-element block, amax 7.9: FLOOR gives scale 2^(2-2) = 1, so 7.9
    // would round to 8 and is clamped to 6 (saturated); 6.5 rounds to 6
    // anyway (not saturated); 0.01 is below e2m1's 0.5/2 and flushes.
    std::vector<float> v(32, 1.0f);
    v[0] = 7.9f;
    v[1] = 6.5f;
    v[2] = 0.01f;
    v[3] = 0.0f;
    // A second block of zeros: left out of the scale range.
    v.resize(64, 0.0f);
    const torch::Tensor x = torch::tensor(v).reshape({1, 64});
    const GemmOperandStats s = measure(x, GemmFormat::Mxfp4, GemmRole::Weight);
    QCOMPARE(s.saturation, 1.0 / 64.0);
    QCOMPARE(s.underflow, 1.0 / 31.0);
    QCOMPARE(s.scaleLog2Min, 0.0);
    QCOMPARE(s.scaleLog2Max, 0.0);
    QVERIFY(std::abs(s.dynamicRangeLog2 - std::log2(7.9 / double(0.01f))) < 1e-5);
  }

  void nvfp4ScalesIncludeTheTensorScale() {
    torch::manual_seed(3);
    const torch::Tensor x = torch::randn({4, 48}) * 1e-3;
    const QuantizedTensor q = quantizeDequantize(x, GemmFormat::Nvfp4, GemmRole::GradOutput);
    const GemmOperandStats s = measureQuantizedOperand(x, q, GemmFormat::Nvfp4, GemmRole::GradOutput);
    const torch::Tensor block = q.blockScales.view(torch::kFloat8_e4m3fn).to(torch::kFloat32) * q.tensorScale;
    QVERIFY(std::abs(s.scaleLog2Min - std::log2(block.min().item<double>())) < 1e-9);
    QVERIFY(std::abs(s.scaleLog2Max - std::log2(block.max().item<double>())) < 1e-9);
    QVERIFY(std::abs(s.relError - relError(x, GemmFormat::Nvfp4, GemmRole::GradOutput)) < 1e-6);
    QVERIFY(s.relError > 0.01);  // 4-bit elements: percent-level error
  }

  // A bf16 layer hands the collector its GEMM operands (quantizeForGemm):
  // the figures from them equal those from the dequantized values exactly,
  // every format and role, rows with a short block, all-zero rows (NVFP4
  // block scale 0), a NaN and an Inf, fp32 and bf16 operands.
  void operandFiguresEqualDequantizedOnes() {
    torch::manual_seed(5);
    torch::Tensor x = torch::randn({40, 90}) * torch::exp(2 * torch::randn({40, 90}));
    x[3].zero_();
    x[7][11] = std::numeric_limits<float>::quiet_NaN();
    x[9][20] = std::numeric_limits<float>::infinity();
    for (GemmFormat f : allGemmFormats())
      for (GemmRole r : {GemmRole::Input, GemmRole::Weight, GemmRole::GradOutput})
        for (auto dtype : {torch::kFloat32, torch::kBFloat16}) {
          const torch::Tensor in = (r == GemmRole::GradOutput ? x.slice(0, 0, 5) : x).to(dtype);  // and a finite one
          const GemmOperandStats a = measure(in, f, r);
          const GemmOperandStats b = measureGemmOperand(in, quantizeForGemm(in, f, r, dtype), f, r);
          const std::string what = gemmFormatId(f) + " " + gemmRoleId(r);
          auto same = [](double u, double v) { return u == v || (std::isnan(u) && std::isnan(v)); };
          QVERIFY2(same(a.underflow, b.underflow) && same(a.saturation, b.saturation), what.c_str());
          QVERIFY2(same(a.dynamicRangeLog2, b.dynamicRangeLog2) && same(a.relError, b.relError), what.c_str());
          QVERIFY2(same(a.scaleLog2Min, b.scaleLog2Min) && same(a.scaleLog2Max, b.scaleLog2Max), what.c_str());
        }
  }

  void collectorKeepsOneEntryPerLayerAndRole() {
    GemmStatsCollector c;
    torch::manual_seed(4);
    const torch::Tensor w = torch::randn({8, 32}).requires_grad_();
    auto pass = [&] {
      const torch::Tensor x = torch::randn({5, 32});
      const torch::Tensor y = quantizedLinear(x, w, {}, GemmFormat::Mxfp8, &c, "layer");
      y.backward(torch::randn_like(y));
    };
    pass();  // not armed: nothing kept
    c.arm();
    pass();
    pass();  // a second micro-batch: the first one's entries stay
    const auto stats = c.disarm();
    QCOMPARE(stats.size(), size_t(3));
    QVERIFY(stats[0].role == GemmRole::Input && stats[1].role == GemmRole::Weight &&
            stats[2].role == GemmRole::GradOutput);
    for (const auto& s : stats) {
      QCOMPARE(s.layer, std::string("layer"));
      QVERIFY(s.format == GemmFormat::Mxfp8);
      QVERIFY(s.relError > 0 && s.relError < 0.1);
    }
    QVERIFY(!c.armed());
  }

  void metricsFilesCarryThemOnStatisticsSteps() {
    QTemporaryDir dir;
    for (GemmFormat f : {GemmFormat::Bf16, GemmFormat::Nvfp4}) {
      RunConfig c = test::smallTrainingRun(OptimizerMode::Bf16Kahan, 4);
      c.eval_every = 0;
      c.eval_batches = 1;
      c.layer_stats_every = 3;
      c.plan.gemm_format = f;
      c.output_dir = (std::filesystem::path(dir.path().toStdString()) / gemmFormatId(f)).string();
      Trainer t(c);
      const RunResult r = t.run({});
      QVERIFY2(r.status == RunStatus::Completed, r.message.c_str());
      std::ifstream in(std::filesystem::path(c.output_dir) / "metrics.jsonl");
      std::string line;
      std::vector<int64_t> stepsWithStats;
      while (std::getline(in, line)) {
        const nlohmann::json j = nlohmann::json::parse(line);
        if (!j.contains("gemm_layers")) continue;
        stepsWithStats.push_back(j.at("step").get<int64_t>());
        const StepMetrics m = stepMetricsFromJson(j);
        // Tiny GPT-2: 2 blocks x 4 Conv1D + the tied head, 3 roles each.
        QCOMPARE(m.gemmLayers.size(), size_t(9 * 3));
        for (const GemmOperandStats& s : m.gemmLayers) {
          QVERIFY(s.format == f);
          QVERIFY(std::isfinite(s.relError) && s.relError > 0);
          QVERIFY(s.underflow >= 0 && s.underflow <= 1 && s.saturation >= 0 && s.saturation <= 1);
          QVERIFY(s.scaleLog2Min <= s.scaleLog2Max);
        }
        QCOMPARE(toJson(m).at("gemm_layers"), j.at("gemm_layers"));
      }
      if (f == GemmFormat::Bf16) QVERIFY(stepsWithStats.empty());
      else QCOMPARE(stepsWithStats, (std::vector<int64_t>{1, 3}));
    }
  }
};

PLAB_TEST_APPLESS_MAIN(GemmStatsTest)
}  // namespace test_gemm_stats
#include "test_gemm_stats.moc"
