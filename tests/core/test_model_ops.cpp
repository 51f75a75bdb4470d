// The models' two hot operations against what they replace:
// - causalAttention (at::scaled_dot_product_attention) against the explicit
//   formula softmax(q k^T * scale + mask) v, in fp32 and in bf16, with
//   grouped-query heads, a sliding window and GPT-2's scale flags;
// - linearInWeightDtype's upcast bf16 path (fp32 kernels on bf16 operands,
//   one rounding) against LibTorch's own bf16 product, forward and backward.
#include <QtTest/QtTest>
#include <torch/torch.h>

#include <cmath>
#include <limits>

#include "model/bf16_linear.h"
#include "model/layers.h"
#include "support/test_registry.h"

namespace test_model_ops {

using namespace plab;

namespace {

// softmax(q k^T * scale, masked) v in fp64, kv heads repeated for GQA.
torch::Tensor explicitAttention(torch::Tensor q, torch::Tensor k, torch::Tensor v, double scale, int64_t window) {
  q = q.to(torch::kFloat64), k = k.to(torch::kFloat64), v = v.to(torch::kFloat64);
  const int64_t heads = q.size(1), T = q.size(2);
  if (k.size(1) != heads) {
    k = k.repeat_interleave(heads / k.size(1), 1);
    v = v.repeat_interleave(heads / v.size(1), 1);
  }
  torch::Tensor scores = torch::matmul(q, k.transpose(-2, -1)) * scale;
  const torch::Tensor i = torch::arange(T).unsqueeze(1), j = torch::arange(T).unsqueeze(0);
  torch::Tensor hidden = j > i;
  if (window > 0) hidden = hidden.logical_or(i - j >= window);
  scores = scores.masked_fill(hidden, -std::numeric_limits<double>::infinity());
  const torch::Tensor out = torch::matmul(torch::softmax(scores, -1), v);
  return out.transpose(1, 2).reshape({q.size(0), T, heads * q.size(3)});
}

// Largest difference in units of the last place of bf16 at b's magnitude.
double maxBf16Ulps(const torch::Tensor& a, const torch::Tensor& b) {
  const torch::Tensor a32 = a.to(torch::kFloat32), b32 = b.to(torch::kFloat32);
  const torch::Tensor ulp = torch::pow(2.0, torch::floor(torch::log2(b32.abs().clamp_min(1e-30))) - 7);
  return ((a32 - b32).abs() / ulp).max().item<double>();
}

}  // namespace

class ModelOpsTest : public QObject {
  Q_OBJECT

  struct Case {
    const char* name;
    int64_t heads, kvHeads, window;
    double scale;  // <= 0: the default 1/sqrt(head_dim)
  };

 private slots:
  void attentionMatchesTheExplicitFormulaInFp32() {
    const Case cases[] = {{"gpt2", 4, 4, 0, 0},          {"gpt2 unscaled", 4, 4, 0, 1.0},
                          {"gpt2 by layer", 4, 4, 0, 0.0625}, {"gqa", 8, 2, 0, 0},
                          {"mistral window", 4, 2, 5, 0},     {"window past T", 4, 4, 64, 0}};
    for (const Case& c : cases) {
      for (uint64_t seed : {1, 2, 3}) {
        torch::manual_seed(seed);
        const int64_t B = 2, T = 17, D = 16;
        const torch::Tensor q = torch::randn({B, c.heads, T, D}), k = torch::randn({B, c.kvHeads, T, D}),
                            v = torch::randn({B, c.kvHeads, T, D});
        const double scale = c.scale > 0 ? c.scale : 1.0 / std::sqrt(double(D));
        const torch::Tensor ours = c.scale > 0 ? causalAttention(q, k, v, c.scale, c.window)
                                               : causalAttention(q, k, v, std::nullopt, c.window);
        QCOMPARE(ours.scalar_type(), torch::kFloat32);
        const double diff = (ours.to(torch::kFloat64) - explicitAttention(q, k, v, scale, c.window)).abs().max().item<double>();
        if (!(diff <= 1e-5)) QFAIL(qPrintable(QString("%1 seed %2: max |diff| %3").arg(c.name).arg(seed).arg(diff)));
      }
    }
  }

  void bf16AttentionComputesInBf16() {
    torch::manual_seed(4);
    const torch::Tensor q = torch::randn({2, 4, 19, 16}), k = torch::randn({2, 2, 19, 16}), v = torch::randn({2, 2, 19, 16});
    const torch::Tensor out = causalAttention(q.to(torch::kBFloat16), k.to(torch::kBFloat16), v.to(torch::kBFloat16),
                                              std::nullopt, 7);
    QCOMPARE(out.scalar_type(), torch::kBFloat16);
    // Against the exact result of the same (bf16) operands: within a few bf16 ulps
    // (the kernel rounds the probabilities to bf16 before the second product).
    const torch::Tensor exact = explicitAttention(q.to(torch::kBFloat16), k.to(torch::kBFloat16),
                                                  v.to(torch::kBFloat16), 0.25, 7);
    const double relative = ((out.to(torch::kFloat64) - exact).abs().max() / exact.abs().max()).item<double>();
    QVERIFY2(relative < 2e-2, qPrintable(QString("relative error %1").arg(relative)));
    // A mixed block (one fp32 operand) computes in fp32.
    QCOMPARE(causalAttention(q.to(torch::kBFloat16), k, v.to(torch::kBFloat16)).scalar_type(), torch::kFloat32);
  }

  // The upcast path rounds fp32-accumulated products to bf16 once, as the
  // native bf16 kernels do; they may differ only by accumulation order, so at
  // most one bf16 ulp, and on few elements.
  void upcastBf16ProductEqualsNativeUpToAccumulationOrder() {
    const Bf16GemmPath before = cpuBf16GemmPath();
    for (uint64_t seed : {11, 12, 13}) {
      torch::manual_seed(seed);
      const torch::Tensor x0 = torch::randn({3, 5, 48}).to(torch::kBFloat16);
      const torch::Tensor w0 = torch::randn({40, 48}).mul(0.2).to(torch::kBFloat16);
      const torch::Tensor b0 = torch::randn({40}).to(torch::kBFloat16);
      const torch::Tensor upstream = torch::randn({3, 5, 40}).to(torch::kBFloat16);
      torch::Tensor out[2], dx[2], dw[2], db[2];
      const Bf16GemmPath paths[2] = {Bf16GemmPath::Native, Bf16GemmPath::Upcast};
      for (int p = 0; p < 2; ++p) {
        setCpuBf16GemmPath(paths[p]);
        const torch::Tensor x = x0.clone().requires_grad_(), w = w0.clone().requires_grad_(),
                            b = b0.clone().requires_grad_();
        out[p] = linearInWeightDtype(x, w, b);
        out[p].backward(upstream);
        dx[p] = x.grad(), dw[p] = w.grad(), db[p] = b.grad();
        QCOMPARE(out[p].scalar_type(), torch::kBFloat16);
        QCOMPARE(dw[p].scalar_type(), torch::kBFloat16);
      }
      const std::pair<const char*, torch::Tensor*> pairs[] = {{"output", out}, {"dx", dx}, {"dw", dw}, {"db", db}};
      for (const auto& [name, t] : pairs) {
        const double ulps = maxBf16Ulps(t[1], t[0]);
        const double differing = t[1].ne(t[0]).to(torch::kFloat64).mean().item<double>();
        if (!(ulps <= 1.0 && differing <= 0.05))
          QFAIL(qPrintable(QString("seed %1 %2: max %3 bf16 ulps, %4 of elements differ")
                               .arg(seed).arg(name).arg(ulps).arg(differing)));
      }
    }
    // The same product through the transposed view (GPT-2's Conv1D) and without a bias.
    setCpuBf16GemmPath(Bf16GemmPath::Upcast);
    const torch::Tensor x = torch::randn({6, 24}).to(torch::kBFloat16), w = torch::randn({24, 10}).to(torch::kBFloat16);
    const torch::Tensor viaView = linearInWeightDtype(x, w.t(), {});
    const torch::Tensor exact = torch::matmul(x.to(torch::kFloat32), w.to(torch::kFloat32)).to(torch::kBFloat16);
    QVERIFY(torch::equal(viaView, exact));
    setCpuBf16GemmPath(before);
  }

  void fp32WeightsTakeTheFp32Product() {
    torch::manual_seed(5);
    const torch::Tensor x = torch::randn({4, 8}).to(torch::kBFloat16), w = torch::randn({3, 8});
    const torch::Tensor y = linearInWeightDtype(x, w, {});
    QCOMPARE(y.scalar_type(), torch::kFloat32);
    QVERIFY(torch::allclose(y, torch::matmul(x.to(torch::kFloat32), w.t())));
  }
};

PLAB_TEST_APPLESS_MAIN(ModelOpsTest)
}  // namespace test_model_ops
#include "test_model_ops.moc"
