// The quantized linear layer (model/quantized_linear.h): forward and both
// gradients equal the products written out by hand with quantizeDequantize
// (each operand along its reduction dimension), format bf16 is today's path
// bit for bit, the plan's formats reach the layers and the tied head, and a
// short training run in every format stays finite and differs from bf16's.
#include <QtTest/QtTest>

#include "formats/gemm_format.h"
#include "formats/operand_buffers.h"
#include "model/bf16_linear.h"
#include "model/causal_lm.h"
#include "model/layers.h"
#include "model/model_factory.h"
#include "model/quantized_linear.h"
#include "precision/precision_adamw.h"
#include "support/small_runs.h"
#include "support/test_registry.h"
#include "support/tiny_models.h"
#include "train/trainer.h"

namespace test_quantized_linear {

using namespace plab;

namespace {

std::vector<GemmFormat> lowFormats() {
  std::vector<GemmFormat> out;
  for (GemmFormat f : allGemmFormats())
    if (f != GemmFormat::Bf16) out.push_back(f);
  return out;
}

torch::Tensor q(const torch::Tensor& t, GemmFormat f, GemmRole r) {
  return quantizeDequantize(t.contiguous(), f, r).values;
}

bool sameBits(const torch::Tensor& a, const torch::Tensor& b) {
  return a.scalar_type() == b.scalar_type() && a.sizes() == b.sizes() && torch::equal(a, b);
}

// Wide values (several binades) so that the block formats' scales differ from block to block.
torch::Tensor spreadValues(std::vector<int64_t> shape, int64_t seed) {
  torch::manual_seed(seed);
  return torch::randn(shape) * torch::exp(torch::randn(shape));
}

}  // namespace

class QuantizedLinearTest : public QObject {
  Q_OBJECT
 private slots:
  void matchesProductsWrittenOut_data() {
    QTest::addColumn<int>("format");
    QTest::addColumn<bool>("bf16Layer");
    QTest::addColumn<bool>("withBias");
    for (GemmFormat f : lowFormats())
      for (bool bf16Layer : {false, true})
        for (bool withBias : {false, true})
          QTest::newRow((gemmFormatId(f) + (bf16Layer ? " bf16" : " fp32") + (withBias ? " bias" : "")).c_str())
              << int(f) << bf16Layer << withBias;
  }

  void matchesProductsWrittenOut() {
    QFETCH(int, format);
    QFETCH(bool, bf16Layer);
    QFETCH(bool, withBias);
    const GemmFormat f = GemmFormat(format);
    const auto dtype = bf16Layer ? torch::kBFloat16 : torch::kFloat32;
    // 2 x 9 tokens, 40 in, 24 out: rows that end in a short block in every block format.
    const torch::Tensor x = spreadValues({2, 9, 40}, 1).to(dtype).requires_grad_();
    const torch::Tensor w = spreadValues({24, 40}, 2).to(dtype).requires_grad_();
    const torch::Tensor b = withBias ? spreadValues({24}, 3).to(dtype).requires_grad_() : torch::Tensor();
    const torch::Tensor gy = spreadValues({2, 9, 24}, 4).to(dtype);
    const torch::Tensor y = quantizedLinear(x, w, b, f);
    y.backward(gy);

    const torch::Tensor x2 = x.detach().reshape({18, 40}), w2 = w.detach();
    const torch::Tensor g2 = gy.reshape({18, 24}).to(torch::kFloat32);
    torch::Tensor yHand = torch::mm(q(x2, f, GemmRole::Input), q(w2, f, GemmRole::Weight).t());
    if (withBias) yHand = yHand + b.detach().to(torch::kFloat32);
    const torch::Tensor dxHand = torch::mm(q(g2, f, GemmRole::GradOutput), q(w2.t(), f, GemmRole::Weight).t());
    const torch::Tensor dwHand = torch::mm(q(g2.t(), f, GemmRole::GradOutput), q(x2.t(), f, GemmRole::Input).t());

    QCOMPARE(y.scalar_type(), dtype);
    QCOMPARE(x.grad().scalar_type(), dtype);
    QCOMPARE(w.grad().scalar_type(), dtype);
    // The same fp32 products in a different summation order (at::linear with
    // a fused bias, mm on transposed views): equal up to fp32 accumulation,
    // bit for bit once rounded to a bf16 layer's dtype in nearly all elements.
    auto close = [&](const torch::Tensor& got, const torch::Tensor& want) {
      const torch::Tensor g32 = got.to(torch::kFloat32), w32 = want.to(dtype).to(torch::kFloat32);
      const double scale = w32.abs().max().item<double>();
      return (g32 - w32).abs().max().item<double>() <= scale * (bf16Layer ? 1.0 / 128 : 1e-5);
    };
    QVERIFY(close(y.reshape({18, 24}), yHand));
    QVERIFY(close(x.grad().reshape({18, 40}), dxHand));
    QVERIFY(close(w.grad(), dwHand));
    if (withBias) QVERIFY(close(b.grad(), g2.sum(0)));
    for (const torch::Tensor& t : {x.grad(), w.grad()}) QVERIFY(torch::isfinite(t).all().item<bool>());

    // The quantization is visible: the products differ from unquantized ones.
    const torch::Tensor plain = torch::mm(x2.to(torch::kFloat32), w2.to(torch::kFloat32).t());
    QVERIFY(!torch::allclose(yHand - (withBias ? b.detach().to(torch::kFloat32) : torch::zeros({})), plain, 0, 0));
  }

  // Blocks down the first dimension in place: the same bits and scale codes
  // as quantizing the transposed copy, for every format and role, fp32 and
  // bf16 input, a column count that spans several tiles and a row count that
  // ends in a short block.
  void columnsEqualTheTransposedCopy() {
    for (GemmFormat f : allGemmFormats())
      for (GemmRole r : {GemmRole::Input, GemmRole::Weight, GemmRole::GradOutput})
        for (auto dtype : {torch::kFloat32, torch::kBFloat16}) {
          const torch::Tensor x = spreadValues({83, 600}, 10).to(dtype);
          const QuantizedTensor viaCopy = quantizeDequantize(x.t().contiguous(), f, r);
          const QuantizedTensor inPlace = quantizeDequantizeColumns(x, f, r);
          const std::string what = gemmFormatId(f) + " " + gemmRoleId(r);
          QVERIFY2(inPlace.values.sizes() == x.sizes(), what.c_str());
          QVERIFY2(sameBits(inPlace.values.t().contiguous(), viaCopy.values), what.c_str());
          QCOMPARE(inPlace.blockScales.defined(), viaCopy.blockScales.defined());
          if (viaCopy.blockScales.defined()) QVERIFY2(torch::equal(inPlace.blockScales, viaCopy.blockScales), what.c_str());
          QVERIFY2(torch::equal(inPlace.tensorScale, viaCopy.tensorScale), what.c_str());
        }
  }

  // An fp32 layer's products are torch's fp32 products on the dequantized
  // operands, bit for bit: y = at::linear(Q(x), Q(W), b), dW = mm(Q(dY^T)^T,
  // Q(x^T)^T), each rounded once to the layer's dtype. A bf16 layer's are
  // the GEMM operands' bf16 products (gemm_product.h): at::addmm(b, x_op,
  // W_op^T, alpha = s_x * s_W) in bf16 (MX: alpha 1, at::linear's own
  // call). Large enough (1024 x 300 weight) for the bf16 tables.
  void productsAreTorchsBitForBit() {
    for (GemmFormat f : {GemmFormat::Fp8E4m3, GemmFormat::Mxfp8, GemmFormat::Nvfp4})
      for (auto dtype : {torch::kFloat32, torch::kBFloat16})
        for (bool withBias : {false, true}) {
          const torch::Tensor x = spreadValues({4, 96, 300}, 11).to(dtype).requires_grad_();
          const torch::Tensor w = spreadValues({1024, 300}, 12).to(dtype).requires_grad_();
          const torch::Tensor b = withBias ? spreadValues({1024}, 13).to(dtype).requires_grad_() : torch::Tensor();
          const torch::Tensor gy = spreadValues({4, 96, 1024}, 14).to(dtype);
          const torch::Tensor y = quantizedLinear(x, w, b, f);
          y.backward(gy);
          const torch::Tensor x2 = x.detach().reshape({384, 300}), w2 = w.detach(), g2 = gy.reshape({384, 1024});
          const std::string what = gemmFormatId(f) + (dtype == torch::kBFloat16 ? " bf16" : " fp32");
          torch::Tensor yTorch, dwTorch;
          if (dtype == torch::kFloat32) {
            const torch::Tensor bias32 = withBias ? b.detach().to(torch::kFloat32) : torch::Tensor();
            yTorch = at::linear(q(x2, f, GemmRole::Input), q(w2, f, GemmRole::Weight), bias32);
            dwTorch = torch::mm(quantizeDequantizeColumns(g2, f, GemmRole::GradOutput).values.t(),
                                quantizeDequantizeColumns(x2, f, GemmRole::Input).values);
          } else {
            const auto bf = torch::kBFloat16;
            const GemmOperand ox = quantizeForGemm(x2, f, GemmRole::Input, bf);
            const GemmOperand ow = quantizeForGemm(w2, f, GemmRole::Weight, bf);
            const GemmOperand og = quantizeForGemmColumns(g2, f, GemmRole::GradOutput, bf);
            const GemmOperand oxT = quantizeForGemmColumns(x2, f, GemmRole::Input, bf);
            const torch::Tensor zero = torch::zeros({}, torch::kBFloat16);
            yTorch = at::addmm(withBias ? b.detach() : zero, ox.values, ow.values.t(), withBias ? 1 : 0,
                               (ox.scale * ow.scale).item<double>());
            dwTorch = at::addmm(zero, og.values.t(), oxT.values, 0, (og.scale * oxT.scale).item<double>());
          }
          QVERIFY2(sameBits(y.reshape({384, 1024}), yTorch.to(dtype)), what.c_str());
          QVERIFY2(sameBits(w.grad(), dwTorch.to(dtype)), what.c_str());
        }
  }

  // Independently of how the products are assembled: a bf16 layer's y and dW
  // are the exact (fp64) products of the dequantized operands, within their
  // one bf16 rounding (2^-8 of the result bounds half an ulp) and fp32
  // accumulation (2^-20 of the sum of magnitudes). A wrong scale or operand,
  // or a second rounding of the product before the scales, would miss.
  void bf16ProductsAreTheDequantizedOperandsProducts() {
    for (GemmFormat f : lowFormats())
      for (bool withBias : {false, true}) {
        const auto bf = torch::kBFloat16, f64 = torch::kFloat64;
        const torch::Tensor x = spreadValues({2, 80, 96}, 21).to(bf).requires_grad_();
        const torch::Tensor w = spreadValues({200, 96}, 22).to(bf).requires_grad_();
        const torch::Tensor b = withBias ? spreadValues({200}, 23).to(bf).requires_grad_() : torch::Tensor();
        const torch::Tensor gy = spreadValues({2, 80, 200}, 24).to(bf);
        const torch::Tensor y = quantizedLinear(x, w, b, f);
        y.backward(gy);
        const torch::Tensor x2 = x.detach().reshape({160, 96}), w2 = w.detach(), g2 = gy.reshape({160, 200});
        const torch::Tensor qx = q(x2, f, GemmRole::Input).to(f64), qw = q(w2, f, GemmRole::Weight).to(f64);
        const torch::Tensor product = torch::mm(qx, qw.t());
        const torch::Tensor yExact = withBias ? product + b.detach().to(f64) : product;
        const torch::Tensor qg = quantizeDequantizeColumns(g2, f, GemmRole::GradOutput).values.to(f64);
        const torch::Tensor qxT = quantizeDequantizeColumns(x2, f, GemmRole::Input).values.to(f64);
        const torch::Tensor dwExact = torch::mm(qg.t(), qxT);
        auto within = [](const torch::Tensor& got, const torch::Tensor& exact, const torch::Tensor& sumOfMagnitudes) {
          const torch::Tensor bound = exact.abs() * std::ldexp(1.0, -8) + sumOfMagnitudes * std::ldexp(1.0, -20);
          return ((got.to(torch::kFloat64) - exact).abs() <= bound).all().item<bool>();
        };
        const std::string what = gemmFormatId(f) + (withBias ? " bias" : "");
        QVERIFY2(within(y.reshape({160, 200}), yExact, torch::mm(qx.abs(), qw.abs().t())), what.c_str());
        QVERIFY2(within(w.grad(), dwExact, torch::mm(qg.abs().t(), qxT.abs())), what.c_str());
      }
  }

  // gemm_product.cpp relies on LibTorch's bf16 at::addmm applying alpha to
  // the fp32 accumulator before its one rounding (as a tensor core's
  // epilogue), not to a bf16-rounded product: with integer operands (exact
  // sums) every element equals the exact scaled sum rounded once, and a
  // product rounded first, then scaled, differs in many.
  void addmmScalesBeforeItsOneRounding() {
    torch::manual_seed(61);
    const torch::Tensor a = (torch::randn({256, 128}) * 4).round().to(torch::kBFloat16);
    const torch::Tensor b = (torch::randn({128, 512}) * 4).round().to(torch::kBFloat16);
    const double alpha = 1.2345678f;
    const torch::Tensor got = at::addmm(torch::zeros({}, torch::kBFloat16), a, b, 0, alpha);
    const torch::Tensor exact = torch::mm(a.to(torch::kFloat64), b.to(torch::kFloat64)) * alpha;
    QVERIFY(sameBits(got, exact.to(torch::kFloat32).to(torch::kBFloat16)));
    const torch::Tensor twice = (torch::mm(a, b).to(torch::kFloat32) * alpha).to(torch::kBFloat16);
    QVERIFY((twice != got).to(torch::kFloat32).mean().item<double>() > 0.01);
  }

  // The operand buffers (formats/operand_buffers.h) come back for the next
  // call: a second step of the same layer allocates none, and what the pool
  // holds stays within its bound.
  void operandBuffersAreReused() {
    const torch::Tensor x = spreadValues({2048, 256}, 51).to(torch::kBFloat16).requires_grad_();
    const torch::Tensor w = spreadValues({1024, 256}, 52).to(torch::kBFloat16).requires_grad_();
    auto step = [&] {
      const torch::Tensor y = quantizedLinear(x, w, {}, GemmFormat::Nvfp4);
      y.backward(torch::ones_like(y));
    };
    step();
    const std::size_t held = pooledOperandBytes();
    QVERIFY(held >= kMinPooledBytes);  // dY [2048, 1024] in bf16: 4 MiB, rows and columns
    step();
    QCOMPARE(pooledOperandBytes(), held);
    QVERIFY(held <= kMaxPooledBytes);
  }

  // On a CPU without native bf16 the bf16 layer's operands are fp32 holding
  // the same values: the same results up to the order of fp32 accumulation.
  void upcastPathGivesTheSameProducts() {
    for (GemmFormat f : lowFormats()) {
      const torch::Tensor x = spreadValues({160, 96}, 41).to(torch::kBFloat16);
      const torch::Tensor w = spreadValues({200, 96}, 42).to(torch::kBFloat16);
      const Bf16GemmPath before = cpuBf16GemmPath();
      setCpuBf16GemmPath(Bf16GemmPath::Native);
      const torch::Tensor native = quantizedLinear(x, w, {}, f).to(torch::kFloat32);
      setCpuBf16GemmPath(Bf16GemmPath::Upcast);
      const torch::Tensor upcast = quantizedLinear(x, w, {}, f).to(torch::kFloat32);
      setCpuBf16GemmPath(before);
      const double differing = (native != upcast).to(torch::kFloat32).mean().item<double>();
      const std::string what = gemmFormatId(f) + ": " + std::to_string(differing) + " of the elements differ";
      QVERIFY2(differing < 0.05, what.c_str());
      QVERIFY2(((native - upcast).abs() <= native.abs() * std::ldexp(1.0, -7)).all().item<bool>(), what.c_str());
    }
  }

  // The orientation matters for block formats: quantizing W along in-features
  // for dX (the wrong axis) would give other values.
  void blockFormatsQuantizeAlongTheReductionDimension() {
    const GemmFormat f = GemmFormat::Mxfp4;
    const torch::Tensor x = spreadValues({64, 64}, 5).requires_grad_();
    const torch::Tensor w = spreadValues({64, 64}, 6).requires_grad_();
    const torch::Tensor gy = spreadValues({64, 64}, 7);
    quantizedLinear(x, w, {}, f).backward(gy);
    const torch::Tensor wrongAxis = torch::mm(q(gy, f, GemmRole::GradOutput), q(w.detach(), f, GemmRole::Weight));
    QVERIFY(!torch::equal(x.grad(), wrongAxis));
  }

  void bf16FormatIsTodaysPathBitForBit() {
    for (auto dtype : {torch::kFloat32, torch::kBFloat16}) {
      LinearImpl lin(40, 24, true);
      torch::manual_seed(8);
      {
        torch::NoGradGuard g;
        lin.weight.copy_(torch::randn({24, 40}).to(dtype));
        lin.bias.set_data(torch::randn({24}).to(dtype));
        lin.weight.set_data(lin.weight.to(dtype));
      }
      const torch::Tensor x = spreadValues({3, 40}, 9).requires_grad_();
      const torch::Tensor viaLayer = lin.forward(x);
      viaLayer.sum().backward();
      const torch::Tensor dxLayer = x.grad().clone(), dwLayer = lin.weight.grad().clone();
      x.mutable_grad() = torch::Tensor();
      lin.weight.mutable_grad() = torch::Tensor();
      const torch::Tensor today = linearInWeightDtype(x, lin.weight, lin.bias);
      today.sum().backward();
      QVERIFY(lin.gemm.format == GemmFormat::Bf16);
      QVERIFY(sameBits(viaLayer, today));
      QVERIFY(sameBits(dxLayer, x.grad()));
      QVERIFY(sameBits(dwLayer, lin.weight.grad()));
    }
  }

  void planReachesLayersAndTiedHead() {
    auto model = createModel(test::tinyGpt2Config(), 1);
    PrecisionPlan plan;
    plan.gemm_format = GemmFormat::Nvfp4;
    plan.setGemmSubtree("transformer.h.1", GemmFormat::Mxfp8);
    plan.setGemmSubtree("lm_head", GemmFormat::Bf16);
    const auto set = applyGemmFormats(*model, plan);
    QVERIFY(set.at("transformer.h.0.attn.c_attn") == GemmFormat::Nvfp4);
    QVERIFY(set.at("transformer.h.1.mlp.c_proj") == GemmFormat::Mxfp8);
    QVERIFY(set.at("lm_head") == GemmFormat::Bf16);
    QVERIFY(model->headGemm.format == GemmFormat::Bf16);
    // Through applyPrecisionPlan, as the trainer applies a plan; the fp32 reference keeps bf16.
    plan.gemm_formats.clear();
    applyPrecisionPlan(*model, plan, OptimizerMode::Bf16Kahan);
    QVERIFY(model->headGemm.format == GemmFormat::Nvfp4);
    QCOMPARE(model->headGemm.layer, std::string("lm_head"));
    applyPrecisionPlan(*model, plan, OptimizerMode::Fp32AdamW);
    QVERIFY(model->headGemm.format == GemmFormat::Bf16);
  }

  void shortTrainingRunInEveryFormat() {
    std::map<GemmFormat, std::vector<double>> losses;
    for (GemmFormat f : allGemmFormats()) {
      RunConfig c = test::smallTrainingRun(OptimizerMode::Bf16Kahan, 4);
      c.eval_every = 0;
      c.eval_batches = 1;
      c.plan.gemm_format = f;
      Trainer trainer(c);
      Trainer::Callbacks cb;
      cb.onStep = [&](const StepMetrics& m) {
        losses[f].push_back(m.loss);
        QVERIFY(std::isfinite(m.gradNorm) && m.gradNorm > 0);
      };
      const RunResult r = trainer.run(cb);
      QVERIFY2(r.status == RunStatus::Completed, r.message.c_str());
      QCOMPARE(losses[f].size(), size_t(4));
      for (double l : losses[f]) QVERIFY(std::isfinite(l));
    }
    // Same seed, same batches: the first loss already feels the forward's quantization.
    for (GemmFormat f : lowFormats()) QVERIFY2(losses[f] != losses[GemmFormat::Bf16], gemmFormatId(f).c_str());
  }
};

PLAB_TEST_APPLESS_MAIN(QuantizedLinearTest)
}  // namespace test_quantized_linear
#include "test_quantized_linear.moc"
