// The CPU bf16 product path chosen by measurement (model/bf16_gemm_choice.h):
// which products a model has, that the measurement times every path without
// drawing from torch's generator, the decision rule, one measurement per
// process and shapes, and nothing measured when forced (test_trainer checks
// that a run's run_info.json names the measured choice).
#include <QtTest/QtTest>
#include <torch/torch.h>

#include <cstdlib>
#include <map>
#include <tuple>

#include "model/bf16_gemm_choice.h"
#include "model/model_factory.h"
#include "precision/precision_adamw.h"
#include "precision/precision_plan.h"
#include "support/test_registry.h"
#include "support/tiny_models.h"

namespace test_bf16_gemm_choice {

using namespace plab;

namespace {

using ShapeKey = std::tuple<int64_t, int64_t, bool>;  // in, out, transposed

std::map<ShapeKey, int64_t> countsOf(const std::vector<Bf16GemmShape>& shapes, int64_t rows) {
  std::map<ShapeKey, int64_t> out;
  for (const Bf16GemmShape& s : shapes) {
    if (s.rows != rows) return {};
    out[{s.in, s.out, s.transposedWeight}] += s.count;
  }
  return out;
}

std::shared_ptr<CausalLM> bf16Model(const ModelConfig& c) {
  std::shared_ptr<CausalLM> m = createModel(c, 1);
  PrecisionPlan plan;
  plan.preset = PlanPreset::AllBf16;
  applyPrecisionPlan(*m, plan, OptimizerMode::Bf16Kahan);
  return m;
}

Bf16GemmMeasurement rates(double native, double upcast) {
  Bf16GemmMeasurement m;
  m.nativeGflops = native;
  m.upcastGflops = upcast;
  m.fp32Gflops = 1;
  m.shapes = 1;
  m.rounds = 3;
  return m;
}

}  // namespace

class Bf16GemmChoiceTest : public QObject {
  Q_OBJECT

 private slots:
  // GPT-2 multiplies by transposed Conv1D views and, tied, by its embedding;
  // Llama by Linear weights and an untied head; fp32 layers are not listed.
  void shapesAreTheModelsBf16Products() {
    const ModelConfig g = test::tinyGpt2Config();  // hidden 32, 2 layers, vocab 61
    const std::map<ShapeKey, int64_t> gpt2 = countsOf(bf16GemmShapes(*bf16Model(g), 16), 16);
    const std::map<ShapeKey, int64_t> wantGpt2 = {{{32, 96, true}, 2},  // c_attn
                                                  {{32, 32, true}, 2},  // attn.c_proj
                                                  {{32, 128, true}, 2},  // mlp.c_fc
                                                  {{128, 32, true}, 2},  // mlp.c_proj
                                                  {{32, 61, false}, 1}};  // the tied head
    QVERIFY(gpt2 == wantGpt2);
    const std::map<ShapeKey, int64_t> llama = countsOf(bf16GemmShapes(*bf16Model(test::tinyLlamaConfig()), 8), 8);
    int64_t products = 0;
    for (const auto& [key, count] : llama) {
      QVERIFY(!std::get<2>(key));
      products += count;
    }
    QCOMPARE(products, int64_t(2 * 7 + 1));  // q, k, v, o, gate, up, down per layer; lm_head
    QVERIFY(llama.count({32, 61, false}) == 1);
    QVERIFY(bf16GemmShapes(*createModel(g, 1), 16).empty());  // fp32 weights: no bf16 product
  }

  void measurementTimesEveryPathAndLeavesTheGeneratorAlone() {
    const std::vector<Bf16GemmShape> shapes = bf16GemmShapes(*bf16Model(test::tinyGpt2Config()), 64);
    torch::manual_seed(3);
    const Bf16GemmMeasurement m = measureBf16GemmPaths(shapes);
    const torch::Tensor after = torch::rand({8});
    torch::manual_seed(3);
    QVERIFY(torch::equal(after, torch::rand({8})));  // a seeded run draws the same with or without it
    QVERIFY(m.measured());
    QVERIFY(m.fp32Gflops > 0);
    QCOMPARE(m.shapes, int64_t(5));
    QVERIFY(m.rounds >= 2 && m.rounds <= 5);  // never decided on one round
    QCOMPARE(m.threads, at::get_num_threads());
    QVERIFY(m.seconds > 0);
    QVERIFY(measureBf16GemmPaths({}).shapes == 0);
  }

  // The faster path wins by more than 5 %; within that the CPU's default stays.
  void theFasterPathWinsBeyondTheMargin() {
    QVERIFY(fasterBf16GemmPath(rates(100, 90), Bf16GemmPath::Upcast) == Bf16GemmPath::Native);
    QVERIFY(fasterBf16GemmPath(rates(100, 97), Bf16GemmPath::Upcast) == Bf16GemmPath::Upcast);
    QVERIFY(fasterBf16GemmPath(rates(60, 95), Bf16GemmPath::Native) == Bf16GemmPath::Upcast);
    QVERIFY(fasterBf16GemmPath(rates(96, 100), Bf16GemmPath::Native) == Bf16GemmPath::Native);
    QVERIFY(fasterBf16GemmPath(Bf16GemmMeasurement{}, Bf16GemmPath::Native) == Bf16GemmPath::Native);
  }

  // Runs of one process on the same shapes multiply alike; a forced path is
  // never measured over.
  void oneMeasurementPerProcessAndNoneWhenForced() {
    if (std::getenv("PLAB_BF16_GEMM")) QSKIP("PLAB_BF16_GEMM forces the path in this environment");
    const std::vector<Bf16GemmShape> shapes = bf16GemmShapes(*bf16Model(test::tinyGpt2Config()), 32);
    const std::optional<Bf16GemmChoice> first = chooseCpuBf16GemmPath(shapes);
    QVERIFY(first.has_value());
    QVERIFY(!first->measuredEarlier);
    QVERIFY(cpuBf16GemmPath() == first->path);
    QVERIFY2(describeCpuBf16GemmPath().find("chosen by measurement") != std::string::npos,
             describeCpuBf16GemmPath().c_str());
    const std::optional<Bf16GemmChoice> second = chooseCpuBf16GemmPath(shapes);
    QVERIFY(second.has_value() && second->measuredEarlier);
    QVERIFY(second->path == first->path);
    QCOMPARE(second->measurement.nativeGflops, first->measurement.nativeGflops);
    const Bf16GemmPath other = first->path == Bf16GemmPath::Native ? Bf16GemmPath::Upcast : Bf16GemmPath::Native;
    setCpuBf16GemmPath(other);
    QVERIFY(!chooseCpuBf16GemmPath(bf16GemmShapes(*bf16Model(test::tinyGpt2Config()), 48)).has_value());
    QVERIFY(cpuBf16GemmPath() == other);
    QVERIFY2(describeCpuBf16GemmPath().find("forced") != std::string::npos, describeCpuBf16GemmPath().c_str());
  }
};

PLAB_TEST_GUILESS_MAIN(Bf16GemmChoiceTest)
}  // namespace test_bf16_gemm_choice
#include "test_bf16_gemm_choice.moc"
