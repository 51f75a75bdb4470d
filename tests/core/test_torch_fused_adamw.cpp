// adamw.torch_step "fused": "fp32" and "bf16" against ATen's own fused AdamW
// (at::_fused_adamw_, what torch.optim.AdamW(fused=True) calls) in the
// LibTorch this project links, bit for bit; every CPU variant of the kernel
// against the others; statistics that leave the arithmetic alone; and the
// for-loop form still selectable. (tests/reference/optimizer_vs_torch.py
// holds the same against Python's torch.optim.AdamW(fused=True).)
#include <QtTest/QtTest>
#include <torch/torch.h>

#include <ATen/Version.h>
#include <ATen/ops/_fused_adamw.h>

#include <map>
#include <string>
#include <vector>

#include "precision/kernels/torch_fused_adamw_cpu.h"
#include "precision/precision_adamw.h"
#include "support/test_registry.h"

namespace test_torch_fused_adamw {

using namespace plab;

namespace {

struct Case {
  torch::ScalarType dtype;
  double weightDecay, beta1;
};

// Sizes whose last n mod 8 (fp32) / n mod 16 (bf16) elements torch steps in
// its scalar remainder, more than one parallel block (2^14), and none.
const std::vector<int64_t> kSizes = {1, 7, 8, 15, 16, 17, 45, 1031, 3 * 16384 + 13};

std::vector<torch::Tensor> makeWeights(torch::ScalarType dtype) {
  torch::manual_seed(11);
  std::vector<torch::Tensor> out;
  for (int64_t n : kSizes) out.push_back((torch::randn({n}) * 0.5).to(dtype));
  return out;
}

torch::Tensor gradFor(int64_t step, size_t i, const torch::Tensor& like) {
  torch::manual_seed(1000 * step + static_cast<int64_t>(i));
  torch::Tensor g = torch::randn(like.sizes()) * std::pow(10.0, -static_cast<double>(step % 4));
  g.masked_fill_(torch::rand(like.sizes()) < 0.05, 0.0);  // exact zeros too
  return g.to(like.scalar_type());
}

struct Stepped {
  std::vector<torch::Tensor> weights;
  std::map<std::string, torch::Tensor> state;
};

// `steps` steps of PrecisionAdamW (fp32 or bf16 mode, the given torch_step);
// statistics on every third step when `stats`.
Stepped runOurs(const Case& c, TorchStep torchStep, int steps, bool stats) {
  std::vector<torch::Tensor> weights = makeWeights(c.dtype);
  std::vector<TrainableParam> params;
  for (size_t i = 0; i < weights.size(); ++i) {
    weights[i].set_requires_grad(true);
    params.push_back({"p" + std::to_string(i), "layer" + std::to_string(i), weights[i], {}});
  }
  AdamWOptions o;
  o.lr = 1e-2;
  o.beta1 = c.beta1;
  o.weight_decay = c.weightDecay;
  o.torchStep = torchStep;
  UpdateStatsOptions statsOptions;
  statsOptions.window = stats ? 4 : 0;
  const OptimizerMode mode = c.dtype == torch::kFloat32 ? OptimizerMode::Fp32AdamW : OptimizerMode::Bf16Plain;
  PrecisionAdamW opt(params, mode, o, 0, statsOptions);
  for (int t = 1; t <= steps; ++t) {
    for (size_t i = 0; i < weights.size(); ++i) weights[i].mutable_grad() = gradFor(t, i, weights[i]);
    opt.step(o.lr, stats && t % 3 == 0);
    opt.zeroGrad();
  }
  Stepped out;
  for (auto& w : weights) out.weights.push_back(w.detach().clone());
  for (auto& [name, t] : opt.stateTensors()) out.state[name] = t;
  return out;
}

// The same steps through ATen's fused AdamW, as Python's fused=True drives it.
Stepped runAten(const Case& c, int steps) {
  torch::NoGradGuard noGrad;
  std::vector<torch::Tensor> weights = makeWeights(c.dtype), grads(weights.size()), m, v, counts;
  for (auto& w : weights) {
    m.push_back(torch::zeros_like(w));
    v.push_back(torch::zeros_like(w));
    counts.push_back(torch::zeros({}, torch::kFloat32));
  }
  for (int t = 1; t <= steps; ++t) {
    for (size_t i = 0; i < weights.size(); ++i) grads[i] = gradFor(t, i, weights[i]);
    for (auto& k : counts) k.add_(1);
    at::_fused_adamw_(weights, grads, m, v, {}, counts, 1e-2, c.beta1, 0.999, c.weightDecay, 1e-8, false, false);
  }
  Stepped out;
  out.weights = weights;
  for (size_t i = 0; i < weights.size(); ++i) {
    out.state["p" + std::to_string(i) + ".exp_avg"] = m[i];
    out.state["p" + std::to_string(i) + ".exp_avg_sq"] = v[i];
  }
  return out;
}

bool sameBits(const torch::Tensor& a, const torch::Tensor& b) {
  if (a.scalar_type() != b.scalar_type() || a.numel() != b.numel()) return false;
  const auto bits = a.scalar_type() == torch::kFloat32 ? torch::kInt32 : torch::kInt16;
  return torch::equal(a.contiguous().view(bits), b.contiguous().view(bits));
}

// Elements that differ, over weights and both moments.
int64_t differing(const Stepped& a, const Stepped& b) {
  int64_t n = 0;
  for (size_t i = 0; i < a.weights.size(); ++i) n += a.weights[i].ne(b.weights[i]).sum().item<int64_t>();
  for (const auto& [name, t] : b.state) {
    const auto it = a.state.find(name);
    if (it == a.state.end()) return -1;
    n += it->second.ne(t).sum().item<int64_t>();
  }
  return n;
}

bool allSameBits(const Stepped& a, const Stepped& b) {
  for (size_t i = 0; i < a.weights.size(); ++i)
    if (!sameBits(a.weights[i], b.weights[i])) return false;
  for (const auto& [name, t] : b.state) {
    const auto it = a.state.find(name);
    if (it == a.state.end() || !sameBits(it->second, t)) return false;
  }
  return true;
}

}  // namespace

class TorchFusedAdamWTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { torch::set_num_threads(2); }

  void matchesAtenFusedAdamW_data() {
    QTest::addColumn<int>("dtype");
    QTest::addColumn<double>("weightDecay");
    QTest::addColumn<double>("beta1");
    for (auto [name, dtype] : {std::pair{"fp32", torch::kFloat32}, std::pair{"bf16", torch::kBFloat16}}) {
      QTest::newRow((std::string(name) + ", wd 0.1").c_str()) << int(dtype) << 0.1 << 0.9;
      QTest::newRow((std::string(name) + ", no wd").c_str()) << int(dtype) << 0.0 << 0.9;
      // 1 - beta1 >= 0.5: ATen's lerp takes its other form.
      QTest::newRow((std::string(name) + ", beta1 0.3").c_str()) << int(dtype) << 0.1 << 0.3;
    }
  }
  void matchesAtenFusedAdamW() {
    // ATen's portable kernels (no AVX2) are other arithmetic, not claimed.
    if (at::get_cpu_capability() == "DEFAULT")
      QSKIP("ATen runs its portable 'default' kernels here: torch's fused AdamW is then other arithmetic");
    QFETCH(int, dtype);
    QFETCH(double, weightDecay);
    QFETCH(double, beta1);
    const Case c{static_cast<torch::ScalarType>(dtype), weightDecay, beta1};
    const Stepped aten = runAten(c, 25);
    const Stepped fused = runOurs(c, TorchStep::Fused, 25, false);
    const Stepped forLoop = runOurs(c, TorchStep::ForLoop, 25, false);
    const int64_t loopDiffers = differing(forLoop, aten);
    qInfo("torch_step fused vs ATen fused: %lld elements differ; for-loop vs ATen fused: %lld",
          static_cast<long long>(differing(fused, aten)), static_cast<long long>(loopDiffers));
    QVERIFY(allSameBits(fused, aten));
    // The for-loop form is another computation: the comparison can fail.
    QVERIFY(loopDiffers > 0);
  }

  // "default": the fused form on fp32 weights, the for-loop form on bf16 ones.
  void defaultIsFusedForFp32AndForLoopForBf16() {
    const Case fp32{torch::kFloat32, 0.1, 0.9}, bf16{torch::kBFloat16, 0.1, 0.9};
    QVERIFY(allSameBits(runOurs(fp32, TorchStep::ModeDefault, 6, false), runOurs(fp32, TorchStep::Fused, 6, false)));
    QVERIFY(!allSameBits(runOurs(fp32, TorchStep::ModeDefault, 6, false), runOurs(fp32, TorchStep::ForLoop, 6, false)));
    QVERIFY(allSameBits(runOurs(bf16, TorchStep::ModeDefault, 6, false), runOurs(bf16, TorchStep::ForLoop, 6, false)));
    QVERIFY(!allSameBits(runOurs(bf16, TorchStep::ModeDefault, 6, false), runOurs(bf16, TorchStep::Fused, 6, false)));
  }

  void statisticsDoNotDisturbTheArithmetic() {
    for (auto dtype : {torch::kFloat32, torch::kBFloat16}) {
      const Case c{dtype, 0.1, 0.9};
      QVERIFY(allSameBits(runOurs(c, TorchStep::Fused, 12, true), runOurs(c, TorchStep::Fused, 12, false)));
    }
  }

  // fp32: the intended update is the change itself, so nothing is rounded
  // away and both norms agree exactly, as the for-loop form reports.
  void fp32StatisticsReadTheChange() {
    for (TorchStep torchStep : {TorchStep::Fused, TorchStep::ForLoop}) {
      torch::manual_seed(3);
      torch::Tensor w = torch::randn({3 * 16384 + 5}).set_requires_grad(true);
      AdamWOptions o;
      o.torchStep = torchStep;
      PrecisionAdamW opt({{"w", "layer", w, {}}}, OptimizerMode::Fp32AdamW, o, 0);
      w.mutable_grad() = torch::randn(w.sizes());
      const OptimizerStepStats s = opt.step(o.lr, true);
      QCOMPARE(s.layers.size(), size_t(1));
      QCOMPARE(s.layers[0].roundedAway, int64_t(0));
      QVERIFY(s.layers[0].intendedNonZero > 3 * 16384);
      QCOMPARE(s.layers[0].intendedNormSq, s.layers[0].effectiveNormSq);
      QVERIFY(s.layers[0].intendedNormSq > 0);
    }
  }

  void everyCpuVariantRoundsTheSame() {
    const std::vector<kernels::CpuKernel> variants = kernels::availableCpuKernels();
    qInfo("variants: %zu", variants.size());
    for (auto dtype : {torch::kFloat32, torch::kBFloat16}) {
      std::vector<std::vector<torch::Tensor>> results;
      for (kernels::CpuKernel k : variants) {
        torch::manual_seed(5);
        const int64_t n = 2 * 16384 + 29;
        torch::Tensor w = torch::randn({n}).to(dtype), g = (torch::randn({n}) * 1e-2).to(dtype);
        torch::Tensor m = (torch::randn({n}) * 1e-3).to(dtype), v = (torch::rand({n}) * 1e-5).to(dtype);
        kernels::TorchFusedAdamWArgs a;
        a.n = n;
        a.type = dtype == torch::kFloat32 ? kernels::TorchParamType::Fp32 : kernels::TorchParamType::Bf16;
        a.param = w.data_ptr();
        a.grad = g.data_ptr();
        a.m = m.data_ptr();
        a.v = v.data_ptr();
        a.s.decay = 0.999f;
        a.s.negStepSize = -1e-2f;
        a.s.sqrtBiasCorrection2 = 0.05f;
        a.scalarFrom = kernels::torchScalarTailStart(n, a.type);
        kernels::torchFusedAdamWCpu(a, nullptr, k);
        results.push_back({w, m, v});
      }
      for (size_t k = 1; k < results.size(); ++k)
        for (size_t t = 0; t < 3; ++t) QVERIFY(sameBits(results[k][t], results[0][t]));
    }
  }
};

PLAB_TEST_GUILESS_MAIN(TorchFusedAdamWTest)
}  // namespace test_torch_fused_adamw
#include "test_torch_fused_adamw.moc"
