// Memory accounting: the shape-based prediction equals the bytes of the
// tensors the optimizer actually holds, and both equal hand-computed totals.
#include <QtTest/QtTest>
#include <torch/torch.h>

#include "precision/precision_adamw.h"
#include "support/test_registry.h"
#include "util/errors.h"

namespace test_memory_accounting {

using namespace plab;

namespace {

// Embedding 50x8 (400), Linear 8->16 (144), LayerNorm 16 (32), Linear 16->4 (68).
struct TinyNetImpl : torch::nn::Module {
  torch::nn::Embedding emb{nullptr};
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
  torch::nn::LayerNorm ln{nullptr};
  TinyNetImpl() {
    emb = register_module("emb", torch::nn::Embedding(50, 8));
    fc1 = register_module("fc1", torch::nn::Linear(8, 16));
    ln = register_module("ln", torch::nn::LayerNorm(torch::nn::LayerNormOptions({16})));
    fc2 = register_module("fc2", torch::nn::Linear(16, 4));
  }
  torch::Tensor forward(const torch::Tensor& tokens) {
    torch::Tensor h = emb(tokens);
    h = fc1(h.to(fc1->weight.scalar_type())).to(torch::kFloat32);
    h = ln(torch::relu(h).to(ln->weight.scalar_type())).to(torch::kFloat32);
    return fc2(h.to(fc2->weight.scalar_type())).to(torch::kFloat32);
  }
};
TORCH_MODULE(TinyNet);

constexpr int64_t kBf16Elements = 144 + 68;  // the Linear layers under LinearBf16
constexpr int64_t kFp32Elements = 400 + 32;
constexpr int64_t kAll = kBf16Elements + kFp32Elements;

void trainOneStep(TinyNet& net, PrecisionAdamW& opt) {
  const torch::Tensor tokens = torch::randint(0, 50, {6, 5});
  net->forward(tokens).square().mean().backward();
  // As the trainer does in fp16-mixed: the optimizer gets the gradients in fp32.
  if (modeScalesLoss(opt.mode()))
    for (auto& p : net->parameters())
      if (p.grad().defined()) p.mutable_grad() = p.grad().to(torch::kFloat32);
  opt.step(1e-3, true);
}

// A parameter of that shape and dtype with a small random gradient.
TrainableParam paramWithGrad(std::vector<int64_t> shape, torch::ScalarType dtype, const std::string& name) {
  torch::Tensor p = torch::randn(shape).to(dtype).set_requires_grad(true);
  p.mutable_grad() = torch::randn(shape).to(dtype) * 1e-3;
  return TrainableParam{name, name, p, {}};
}

// Which moments the bf16 layers get, written out per recipe (docs/modes.md's mode table).
bool bf16MomentsExpected(OptimizerMode mode, MomentPrecision asked) {
  switch (mode) {
    case OptimizerMode::Fp32AdamW:
    case OptimizerMode::Fp32MasterWeights:
    case OptimizerMode::Fp16Mixed: return false;
    case OptimizerMode::Bf16Plain:
    case OptimizerMode::Fp16Plain: return true;  // torch: state follows the param (2 bytes)
    case OptimizerMode::Bf16Nearest:
      return asked != MomentPrecision::Fp32;  // default: bf16
    case OptimizerMode::Bf16Kahan:
    case OptimizerMode::Bf16StochasticRounding: return asked != MomentPrecision::Fp32;  // default: bf16-sr
  }
  return false;
}

MemoryBreakdown handComputed(OptimizerMode mode, MomentPrecision moments) {
  MemoryBreakdown m;
  if (mode == OptimizerMode::Fp32AdamW) return fp32AdamWBaseline(kAll);
  m.weights = 2 * kBf16Elements + 4 * kFp32Elements;
  m.gradients = m.weights;
  // fp16-mixed's optimizer steps with the unscaled fp32 gradients.
  if (mode == OptimizerMode::Fp16Mixed) m.gradients = 4 * kAll;
  const bool momentsBf16 = bf16MomentsExpected(mode, moments);
  m.moments = 2 * ((momentsBf16 ? 2 : 4) * kBf16Elements + 4 * kFp32Elements);
  if (mode == OptimizerMode::Fp32MasterWeights || mode == OptimizerMode::Fp16Mixed) m.master = 4 * kBf16Elements;
  if (mode == OptimizerMode::Bf16Kahan) m.kahan = 2 * kBf16Elements;
  return m;
}

QString describe(const MemoryBreakdown& m) { return QString::fromStdString(toJson(m).dump()); }

}  // namespace

class MemoryAccountingTest : public QObject {
  Q_OBJECT
 private slots:
  void predictionMatchesMeasurementAndHandCount_data() {
    QTest::addColumn<int>("mode");
    QTest::addColumn<int>("moments");
    for (OptimizerMode m : everyOptimizerMode())
      for (MomentPrecision p : allMomentPrecisions())
        QTest::newRow((optimizerModeId(m) + " moments " + momentPrecisionId(p)).c_str()) << int(m) << int(p);
  }
  void predictionMatchesMeasurementAndHandCount() {
    QFETCH(int, mode);
    QFETCH(int, moments);
    torch::manual_seed(0);
    TinyNet net;
    const PrecisionPlan plan;  // LinearBf16
    AdamWOptions options;
    options.moments = MomentPrecision(moments);
    auto params = applyPrecisionPlan(*net, plan, OptimizerMode(mode));
    QCOMPARE(int64_t(params.size()), int64_t(7));
    const MemoryBreakdown predicted = predictMemory(params, OptimizerMode(mode), options);
    PrecisionAdamW opt(params, OptimizerMode(mode), options, 1);
    trainOneStep(net, opt);
    const MemoryBreakdown measured = opt.measuredMemory();
    const MemoryBreakdown expected = handComputed(OptimizerMode(mode), MomentPrecision(moments));
    QCOMPARE(describe(measured), describe(predicted));
    QCOMPARE(describe(predicted), describe(expected));
  }

  // "8bit": 1 byte per element per moment (moments) plus an fp32 scale per 256 (scales)
  // elements where torchao quantizes (>= 4096 elements, whole blocks), the
  // parameter's own dtype elsewhere; counted by hand, predicted from shapes
  // and measured from the tensors after a step.
  void eightBitMomentsCountCodesAndScales() {
    std::vector<TrainableParam> params = {paramWithGrad({64, 64}, torch::kBFloat16, "a"),   // quantized
                                          paramWithGrad({64}, torch::kBFloat16, "b"),       // plain bf16
                                          paramWithGrad({17, 256}, torch::kFloat32, "c"),   // quantized (fp32 weights)
                                          paramWithGrad({4097}, torch::kFloat32, "d"),      // plain fp32: not whole blocks
                                          paramWithGrad({3, 257}, torch::kBFloat16, "e")};  // plain bf16
    for (const MomentPrecision store : {MomentPrecision::Dynamic8bit, MomentPrecision::Fp8}) {  // fp8: the same bytes
      AdamWOptions options;
      options.moments = store;
      // Codes (or plain moments) under `moments`, the quantized tensors' scales under `scales`.
      const int64_t moments = 2 * 4096 + 2 * 2 * 64 + 2 * 4352 + 2 * 4 * 4097 + 2 * 2 * 771;
      const int64_t scales = 2 * 4 * 16 + 2 * 4 * 17;
      for (OptimizerMode mode : {OptimizerMode::Bf16Nearest, OptimizerMode::Bf16Kahan, OptimizerMode::Bf16StochasticRounding}) {
        const MemoryBreakdown predicted = predictMemory(params, mode, options);
        PrecisionAdamW opt(params, mode, options, 1);
        opt.step(1e-3, true);
        const MemoryBreakdown measured = opt.measuredMemory();
        QCOMPARE(describe(measured), describe(predicted));
        QCOMPARE(measured.moments, moments);
        QCOMPARE(measured.scales, scales);
        QCOMPARE(measured.total(), predicted.total());  // the process's state, scales included
        QCOMPARE(measured.kahan, mode == OptimizerMode::Bf16Kahan ? int64_t(2 * (4096 + 64 + 771)) : int64_t(0));
      }
    }
  }

  // "4bit": half a byte per element per moment (moments) plus an fp32 scale
  // per 128 (scales) where torchao quantizes (>= 4096 elements, whole
  // 128-element blocks), the parameter's own dtype elsewhere.
  void fourBitMomentsCountCodesAndScales() {
    std::vector<TrainableParam> params = {paramWithGrad({64, 64}, torch::kBFloat16, "a"),   // quantized
                                          paramWithGrad({33, 128}, torch::kFloat32, "b"),   // quantized (8bit would not)
                                          paramWithGrad({64}, torch::kBFloat16, "c"),       // plain bf16
                                          paramWithGrad({4097}, torch::kFloat32, "d")};     // plain fp32
    AdamWOptions options;
    options.moments = MomentPrecision::Dynamic4bit;
    const int64_t moments = 4096 + 4224 + 2 * 2 * 64 + 2 * 4 * 4097;
    const int64_t scales = 2 * 4 * 32 + 2 * 4 * 33;
    for (OptimizerMode mode : {OptimizerMode::Bf16Nearest, OptimizerMode::Bf16Kahan, OptimizerMode::Bf16StochasticRounding}) {
      const MemoryBreakdown predicted = predictMemory(params, mode, options);
      PrecisionAdamW opt(params, mode, options, 1);
      opt.step(1e-3, true);
      const MemoryBreakdown measured = opt.measuredMemory();
      QCOMPARE(describe(measured), describe(predicted));
      QCOMPARE(measured.moments, moments);
      QCOMPARE(measured.scales, scales);
      // Dequantized for introspection in the parameter's shape.
      QCOMPARE(opt.firstMoment("a").sizes(), params[0].param.sizes());
      QCOMPARE(opt.secondMoment("b").sizes(), params[1].param.sizes());
    }
  }

  void planConvertsDtypesPerMode() {
    for (OptimizerMode mode : everyOptimizerMode()) {
      torch::manual_seed(0);
      TinyNet net;
      const torch::Tensor fc1Before = net->fc1->weight.detach().clone();
      auto params = applyPrecisionPlan(*net, PrecisionPlan{}, mode);
      const auto linearType = mode == OptimizerMode::Fp32AdamW ? torch::kFloat32
                              : modeUsesFp16(mode)             ? torch::kFloat16
                                                               : torch::kBFloat16;
      QCOMPARE(net->fc1->weight.scalar_type(), linearType);
      QCOMPARE(net->fc2->bias.scalar_type(), linearType);
      QCOMPARE(net->emb->weight.scalar_type(), torch::kFloat32);
      QCOMPARE(net->ln->weight.scalar_type(), torch::kFloat32);
      QCOMPARE(QString::fromStdString(params[1].name), QString("fc1.weight"));
      QCOMPARE(QString::fromStdString(params[1].layer), QString("fc1"));
      QVERIFY(params[1].param.is_same(net->fc1->weight));
      // Mixed mode keeps the unrounded fp32 init for the master copy.
      if (mode == OptimizerMode::Fp32MasterWeights || mode == OptimizerMode::Fp16Mixed) {
        QVERIFY(params[1].fp32Source.defined());
        QVERIFY(torch::equal(params[1].fp32Source, fc1Before));
        PrecisionAdamW opt(params, mode, AdamWOptions{}, 0);
        QVERIFY(torch::equal(opt.masterWeight("fc1.weight"), fc1Before));
      } else {
        QVERIFY(!params[1].fp32Source.defined());
      }
    }
  }

  void fp32ModeUndoesAnEarlierBf16Conversion() {
    TinyNet net;
    PrecisionPlan allBf16;
    allBf16.preset = PlanPreset::AllBf16;
    applyPrecisionPlan(*net, allBf16, OptimizerMode::Bf16Plain);
    QCOMPARE(net->ln->weight.scalar_type(), torch::kBFloat16);
    auto params = applyPrecisionPlan(*net, allBf16, OptimizerMode::Fp32AdamW);
    for (const auto& p : params) QCOMPARE(p.param.scalar_type(), torch::kFloat32);
  }

  void tiedWeightIsListedOnce() {
    struct Tied : torch::nn::Module {
      torch::nn::Embedding emb{nullptr};
      std::shared_ptr<torch::nn::Module> head;
      Tied() {
        emb = register_module("emb", torch::nn::Embedding(10, 4));
        head = register_module("head", std::make_shared<torch::nn::Module>());
        head->register_parameter("weight", emb->weight);  // an lm_head tied to the embedding
      }
    } tied;
    PrecisionPlan plan;
    plan.embeddings_bf16 = true;
    auto params = applyPrecisionPlan(tied, plan, OptimizerMode::Bf16Kahan);
    QCOMPARE(int64_t(params.size()), int64_t(1));
    QCOMPARE(QString::fromStdString(params[0].name), QString("emb.weight"));
    QCOMPARE(tied.head->named_parameters()["weight"].scalar_type(), torch::kBFloat16);  // shared storage follows its owner
    QCOMPARE(predictMemory(params, OptimizerMode::Bf16Kahan, AdamWOptions{}).total(), int64_t(40 * 10));
    // Listing it twice by hand is refused: it would be updated twice.
    std::vector<TrainableParam> twice = {params[0], params[0]};
    twice[1].name = "head.weight";
    QVERIFY_THROWS_EXCEPTION(ConfigError, PrecisionAdamW(twice, OptimizerMode::Bf16Kahan, AdamWOptions{}, 0));
  }

  void savingsVersusFp32Baseline() {
    const int64_t n = 1000;
    const MemoryBreakdown base = fp32AdamWBaseline(n);
    QCOMPARE(base.total(), 16 * n);
    QCOMPARE(base.weights, 4 * n);
    QCOMPARE(base.moments, 8 * n);
    // All-bf16 Kahan with its default bf16-sr moments: weights 2 + grads 2 + m 2 + v 2 + kahan 2 = 10 B.
    torch::nn::Linear lin(torch::nn::LinearOptions(40, 25).bias(false));  // 1000 elements
    PrecisionPlan allBf16;
    allBf16.preset = PlanPreset::AllBf16;
    auto params = applyPrecisionPlan(*lin, allBf16, OptimizerMode::Bf16Kahan);
    const MemoryBreakdown kahan = predictMemory(params, OptimizerMode::Bf16Kahan, AdamWOptions{});
    QCOMPARE(kahan.total(), 10 * n);
    QCOMPARE(1.0 - double(kahan.total()) / double(base.total()), 0.375);
    // Plain, nearest and SR: 8 B (50% saved); mixed: w2 + g2 + m4 + v4 + master4 = 16 B (nothing saved).
    QCOMPARE(predictMemory(params, OptimizerMode::Bf16Plain, AdamWOptions{}).total(), 8 * n);
    QCOMPARE(predictMemory(params, OptimizerMode::Bf16Nearest, AdamWOptions{}).total(), 8 * n);
    QCOMPARE(predictMemory(params, OptimizerMode::Bf16StochasticRounding, AdamWOptions{}).total(), 8 * n);
    QCOMPARE(predictMemory(params, OptimizerMode::Fp32MasterWeights, AdamWOptions{}).total(), 16 * n);
  }

  void breakdownJsonRoundTripAndStrictness() {
    MemoryBreakdown m;
    m.weights = 1;
    m.gradients = 2;
    m.moments = 3;
    m.master = 4;
    m.kahan = 5;
    const nlohmann::json j = toJson(m);
    QCOMPARE(j.at("total").get<int64_t>(), int64_t(15));
    QCOMPARE(describe(memoryBreakdownFromJson(j)), describe(m));
    QVERIFY_THROWS_EXCEPTION(ConfigError, memoryBreakdownFromJson(nlohmann::json{{"weights", 1}, {"extra", 2}}));
    QVERIFY_THROWS_EXCEPTION(ConfigError, memoryBreakdownFromJson(nlohmann::json{{"weights", "1"}}));
    QVERIFY_THROWS_EXCEPTION(ConfigError, memoryBreakdownFromJson(nlohmann::json{{"weights", 1}, {"total", 2}}));
    QVERIFY_THROWS_EXCEPTION(ConfigError, memoryBreakdownFromJson(nlohmann::json::array()));
    // Quantized moments' scales: written only where there are some, counted in the total.
    QVERIFY(!j.contains("scales"));
    m.scales = 6;
    const nlohmann::json withScales = toJson(m);
    QCOMPARE(withScales.at("scales").get<int64_t>(), int64_t(6));
    QCOMPARE(withScales.at("total").get<int64_t>(), int64_t(21));
    QCOMPARE(describe(memoryBreakdownFromJson(withScales)), describe(m));
    QVERIFY_THROWS_EXCEPTION(ConfigError, memoryBreakdownFromJson(nlohmann::json{{"scales", -1}}));
  }
};

PLAB_TEST_APPLESS_MAIN(MemoryAccountingTest)
}  // namespace test_memory_accounting
#include "test_memory_accounting.moc"
