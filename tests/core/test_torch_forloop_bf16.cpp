// "bf16"'s default step in one pass (kernels/torch_forloop_bf16.h) against
// the tensor-op form it replaces (steps::torchOptimAdamwInPlace: torch's own
// operations in the order of Python's torch.optim.AdamW for-loop, which
// tests/reference/optimizer_vs_torch.py holds to Python bit for bit), bit
// for bit: every CPU variant, sizes around every vector width and parallel
// block, special values, several hyperparameters, many steps, inputs built
// so that each of torch's fused multiply-adds decides the bf16 result, and
// the statistics step against its tensor-op form.
#include <QtTest/QtTest>
#include <torch/torch.h>

#include <ATen/Version.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "precision/kernels/bf16_bits.h"
#include "precision/kernels/fused_adamw_cpu.h"
#include "precision/kernels/torch_forloop_bf16_cpu.h"
#include "precision/precision_adamw.h"
#include "precision/steps/adamw_step.h"
#include "support/test_registry.h"

namespace test_torch_forloop_bf16 {

using namespace plab;

namespace {

// Tails of every length under torch's vector widths (16 / 32 bf16 lanes, two
// vectors per iteration), more than one parallel block (2^14), and none.
const std::vector<int64_t> kSizes = {1, 2, 7, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 1031, 3 * 16384 + 13};

struct Hyper {
  const char* name;
  double lr, weightDecay, beta1, beta2, eps;
};
const std::vector<Hyper> kHypers = {
    {"default betas, wd 0.01", 1e-3, 0.01, 0.9, 0.999, 1e-8},
    {"beta2 0.99, wd 0.1", 1e-2, 0.1, 0.9, 0.99, 1e-8},
    {"beta2 0.95, no wd", 3e-4, 0.0, 0.9, 0.95, 1e-6},
    {"beta1 0.3 (lerp's other form)", 1e-2, 0.1, 0.3, 0.999, 1e-8},
    {"large lr and wd, beta1 0.05", 0.5, 0.5, 0.05, 0.5, 1e-3},
};

steps::StepScalars scalarsOf(const Hyper& h, int64_t step) {
  steps::StepScalars k;
  k.lr = h.lr;
  k.weightDecay = h.weightDecay;
  k.beta1 = h.beta1;
  k.beta2 = h.beta2;
  k.eps = h.eps;
  k.step = step;
  return k;
}

bool bitsOrBothNan(const torch::Tensor& a, const torch::Tensor& b) {
  const torch::Tensor bothNan = a.isnan().logical_and(b.isnan());
  const torch::Tensor same = a.view(torch::kInt16).eq(b.view(torch::kInt16));
  return same.logical_or(bothNan).all().item<bool>();
}

int64_t differing(const torch::Tensor& a, const torch::Tensor& b) {
  const torch::Tensor bothNan = a.isnan().logical_and(b.isnan());
  return a.view(torch::kInt16).ne(b.view(torch::kInt16)).logical_and(bothNan.logical_not()).sum().item<int64_t>();
}

// bf16 values of every kind: zeros of both signs, subnormals, the smallest
// and largest normals, +-Inf, NaN, and ordinary magnitudes.
torch::Tensor specials() {
  const std::vector<float> v = {0.0f, -0.0f, 1e-40f, -3e-39f, 1.2e-38f, -1.2e-38f, 3.0e38f, -3.0e38f,
                                INFINITY, -INFINITY, NAN, 1.0f, -1.0f, 1e-20f, 1e20f, 0.5f};
  return torch::tensor(v).to(torch::kBFloat16);
}

// The state of one tensor of n elements: ordinary values with a few
// specials scattered in (a fixed 1 in 50 of the positions).
steps::ParamState stateOf(int64_t n, int seed) {
  torch::manual_seed(seed);
  steps::ParamState p;
  const auto scatterSpecials = [&](torch::Tensor t) {
    const torch::Tensor where = torch::rand({n}) < 0.02;
    const torch::Tensor pick = torch::randint(0, 16, {n}, torch::kLong);
    return torch::where(where, specials().index_select(0, pick), t);
  };
  p.param = scatterSpecials((0.05 * torch::randn({n})).to(torch::kBFloat16));
  p.grad = scatterSpecials((torch::randn({n}) * torch::exp(4 * torch::randn({n}))).to(torch::kBFloat16));
  p.m = scatterSpecials((1e-3 * torch::randn({n})).to(torch::kBFloat16));
  p.v = scatterSpecials((1e-6 * torch::rand({n})).to(torch::kBFloat16)).abs();
  return p;
}

steps::ParamState copyOf(const steps::ParamState& p) {
  steps::ParamState c;
  c.param = p.param.clone();
  c.grad = p.grad.clone();
  c.m = p.m.clone();
  c.v = p.v.clone();
  return c;
}

// One step with a chosen variant of the kernel.
void kernelStep(steps::ParamState& p, const steps::StepScalars& k, kernels::CpuKernel variant) {
  kernels::TorchForloopBf16Args a;
  QVERIFY(steps::torchForloopBf16Scalars(k, a.s));
  a.n = p.param.numel();
  a.param = reinterpret_cast<uint16_t*>(p.param.data_ptr<at::BFloat16>());
  a.grad = reinterpret_cast<const uint16_t*>(p.grad.data_ptr<at::BFloat16>());
  a.m = reinterpret_cast<uint16_t*>(p.m.data_ptr<at::BFloat16>());
  a.v = reinterpret_cast<uint16_t*>(p.v.data_ptr<at::BFloat16>());
  kernels::torchForloopBf16Cpu(a, variant);
}

float fma32(float a, float b, float c) { return std::fma(a, b, c); }
float round16(float x) { return kernels::bf16ToFloat(kernels::bf16Nearest(x)); }

}  // namespace

class TorchForloopBf16Test : public QObject {
  Q_OBJECT
 private slots:
  void init() {
    if (at::get_cpu_capability() == "DEFAULT")
      QSKIP("ATen runs its portable 'default' kernels here (no fused multiply-adds): the tensor-op form runs");
  }

  // Every variant against torch's ops, 40 steps on fresh gradients (with
  // specials), each hyperparameter set, sizes with every kind of tail.
  void kernelIsTorchOpsBitForBit_data() {
    QTest::addColumn<int>("hyper");
    for (size_t h = 0; h < kHypers.size(); ++h) QTest::newRow(kHypers[h].name) << int(h);
  }
  void kernelIsTorchOpsBitForBit() {
    QFETCH(int, hyper);
    const Hyper& h = kHypers[static_cast<size_t>(hyper)];
    for (const kernels::CpuKernel variant : kernels::availableCpuKernels())
      for (const int64_t n : kSizes) {
        steps::ParamState ops = stateOf(n, static_cast<int>(n));
        steps::ParamState ours = copyOf(ops);
        for (int64_t t = 1; t <= 40; ++t) {
          torch::manual_seed(100 * t + n);
          const steps::ParamState fresh = stateOf(n, static_cast<int>(1000 * t + n));
          ops.grad = fresh.grad;
          ours.grad = fresh.grad.clone();
          const steps::StepScalars k = scalarsOf(h, t);
          steps::torchOptimAdamwInPlace(ops.param, ops.grad, ops.m, ops.v, k);
          const steps::ParamState before = copyOf(ours);
          kernelStep(ours, k, variant);
          const QString where = QString("%1, n %2, step %3").arg(kernels::cpuKernelName(variant)).arg(n).arg(t);
          if (!bitsOrBothNan(ours.param, ops.param) || !bitsOrBothNan(ours.m, ops.m) || !bitsOrBothNan(ours.v, ops.v)) {
            const auto off = [](const torch::Tensor& a, const torch::Tensor& b) {
              return a.view(torch::kInt16).ne(b.view(torch::kInt16)).logical_and(a.isnan().logical_and(b.isnan()).logical_not());
            };
            const torch::Tensor bad = off(ours.param, ops.param).logical_or(off(ours.m, ops.m)).logical_or(off(ours.v, ops.v)).nonzero();
            for (int64_t j = 0; j < std::min<int64_t>(3, bad.size(0)); ++j) {
              const int64_t i = bad[j][0].item<int64_t>();
              const auto f = [&](const torch::Tensor& x) { return x[i].to(torch::kFloat32).item<float>(); };
              const auto h = [&](const torch::Tensor& x) { return int(x.view(torch::kInt16)[i].item<int16_t>()) & 0xFFFF; };
              qInfo("bits ours %04x %04x %04x ops %04x %04x %04x", h(ours.param), h(ours.m), h(ours.v), h(ops.param), h(ops.m), h(ops.v));
              qInfo("i %lld: w %.9g g %.9g m %.9g v %.9g -> ours w %.9g m %.9g v %.9g, ops w %.9g m %.9g v %.9g", (long long)i,
                    f(before.param), f(before.grad), f(before.m), f(before.v), f(ours.param), f(ours.m), f(ours.v),
                    f(ops.param), f(ops.m), f(ops.v));
            }
          }
          QVERIFY2(bitsOrBothNan(ours.param, ops.param),
                   qPrintable(where + QString(": %1 weights differ").arg(differing(ours.param, ops.param))));
          QVERIFY2(bitsOrBothNan(ours.m, ops.m), qPrintable(where + ": exp_avg differs"));
          QVERIFY2(bitsOrBothNan(ours.v, ops.v), qPrintable(where + ": exp_avg_sq differs"));
        }
      }
  }

  // Inputs where each of torch's fused multiply-adds decides the bf16
  // result (rounding its product first gives another bf16 value), placed at
  // every position of tensors whose last elements torch's scalar remainder
  // steps: a kernel that rounded there differently, or that took the
  // vectorised body's form for the remainder when torch does not, fails here.
  void fusedMultiplyAddsDecideAndMatch() {
    const steps::StepScalars k = scalarsOf(kHypers[1], 3);
    kernels::TorchForloopBf16Scalars s;
    QVERIFY(steps::torchForloopBf16Scalars(k, s));
    // Random bf16 inputs of ordinary magnitudes, m near g and v near
    // (1 - beta2) g^2 (so that the product's last bits can matter), kept
    // where fusing or not gives two bf16 results.
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
    std::normal_distribution<float> normal;
    std::vector<float> gs, ms, vs;
    std::vector<int64_t> lerpDecides, addcmulDecides;
    for (int64_t tries = 0; tries < (int64_t(1) << 26) && (lerpDecides.size() < 64 || addcmulDecides.size() < 64);
         ++tries) {
      const float gi = round16(normal(rng) * std::exp(3 * normal(rng)));
      const float mi = round16(gi * 3 * unit(rng));
      const float vi = round16(gi * gi * 0.02f * (unit(rng) + 1));
      const float diff = gi - mi;
      const bool lerp = round16(fma32(s.lerpWeight, diff, mi)) != round16(mi + s.lerpWeight * diff);
      const float v1 = round16(vi * s.beta2);
      const bool addcmul = round16(fma32(s.oneMinusBeta2 * gi, gi, v1)) != round16(v1 + (s.oneMinusBeta2 * gi) * gi);
      if (!(lerp && lerpDecides.size() < 64) && !(addcmul && addcmulDecides.size() < 64)) continue;
      if (lerp) lerpDecides.push_back(static_cast<int64_t>(gs.size()));
      if (addcmul) addcmulDecides.push_back(static_cast<int64_t>(gs.size()));
      gs.push_back(gi);
      ms.push_back(mi);
      vs.push_back(vi);
    }
    const torch::Tensor g = torch::tensor(gs).to(torch::kBFloat16), m = torch::tensor(ms).to(torch::kBFloat16),
                        v = torch::tensor(vs).to(torch::kBFloat16);
    qInfo("inputs where the fused multiply-add decides: lerp %zu, addcmul %zu", lerpDecides.size(),
          addcmulDecides.size());
    QVERIFY(lerpDecides.size() >= 16 && addcmulDecides.size() >= 16);
    for (const auto* picked : {&lerpDecides, &addcmulDecides}) {
      const torch::Tensor index = torch::tensor(*picked, torch::kLong);
      for (const int64_t n : {int64_t(17), int64_t(63), int64_t(100), int64_t(1031)}) {
        const torch::Tensor at = torch::arange(n, torch::kLong).remainder(index.numel());
        steps::ParamState ops;
        ops.param = (0.05 * torch::randn({n})).to(torch::kBFloat16);
        ops.grad = g.index_select(0, index).index_select(0, at);
        ops.m = m.index_select(0, index).index_select(0, at);
        ops.v = v.index_select(0, index).index_select(0, at);
        for (const kernels::CpuKernel variant : kernels::availableCpuKernels()) {
          steps::ParamState ours = copyOf(ops);
          steps::ParamState reference = copyOf(ops);
          steps::torchOptimAdamwInPlace(reference.param, reference.grad, reference.m, reference.v, k);
          kernelStep(ours, k, variant);
          const QString where = QString("%1, n %2").arg(kernels::cpuKernelName(variant)).arg(n);
          QVERIFY2(bitsOrBothNan(ours.m, reference.m),
                   qPrintable(where + QString(": %1 exp_avg differ").arg(differing(ours.m, reference.m))));
          QVERIFY2(bitsOrBothNan(ours.v, reference.v),
                   qPrintable(where + QString(": %1 exp_avg_sq differ").arg(differing(ours.v, reference.v))));
          QVERIFY2(bitsOrBothNan(ours.param, reference.param), qPrintable(where + ": weights differ"));
        }
      }
    }
  }

  // Where the kernel would differ, or torch throws, the tensor-op form runs:
  // beta1 = 0 (ATen's lerp gives -0 or +0 by where its remainder falls), a
  // NaN or an fp32-overflowing scalar.
  void tensorOpsWhereTheKernelWouldDiffer() {
    kernels::TorchForloopBf16Scalars s;
    steps::StepScalars k = scalarsOf(kHypers[0], 1);
    QVERIFY(steps::torchForloopBf16Scalars(k, s));
    k.beta1 = 0;
    QVERIFY(!steps::torchForloopBf16Scalars(k, s));
    k = scalarsOf(kHypers[0], 1);
    k.eps = std::nan("");
    QVERIFY(!steps::torchForloopBf16Scalars(k, s));
    k = scalarsOf(kHypers[0], 1);
    k.lr = 1e300;
    QVERIFY(!steps::torchForloopBf16Scalars(k, s));
    // beta1 = 0 through bf16PlainStep: torch's bits, signed zeros included.
    k = scalarsOf(kHypers[0], 2);
    k.beta1 = 0;
    for (const int64_t n : {int64_t(7), int64_t(100)}) {
      steps::ParamState ops = stateOf(n, 3);
      ops.grad.index_put_({torch::arange(0, n, 2)}, -0.0);
      steps::ParamState ours = copyOf(ops);
      steps::torchOptimAdamwInPlace(ops.param, ops.grad, ops.m, ops.v, k);
      steps::bf16PlainStep(ours, k);
      QVERIFY(bitsOrBothNan(ours.m, ops.m) && bitsOrBothNan(ours.param, ops.param));
    }
  }

  // The statistics step with the kernel against the same step by torch's
  // ops: terms, window sample, weights and moments, on a tensor of several
  // statistics pieces ending in a partial one, one thread and two.
  void statisticsStepIsTheTensorOpBits() {
    const int64_t n = 3 * 4 * kernels::kCpuBlock + 77;
    const int threads = at::get_num_threads();
    for (const int threadCount : {1, 2})
      for (const Hyper& h : {kHypers[0], kHypers[1]}) {
        at::set_num_threads(threadCount);
        // Finite values: the sums are compared exactly (a NaN would make them NaN).
        torch::manual_seed(9);
        steps::ParamState ops;
        ops.param = (0.02 * torch::randn({n})).to(torch::kBFloat16);
        ops.grad = (1e-3 * torch::randn({n})).to(torch::kBFloat16);
        ops.m = (1e-4 * torch::randn({n})).to(torch::kBFloat16);
        ops.v = (1e-7 * torch::rand({n})).to(torch::kBFloat16);
        steps::ParamState ours = copyOf(ops);
        const steps::StepScalars k = scalarsOf(h, 3);
        const steps::StepWithTerms a = steps::bf16PlainStepWithTerms(ops, k, 7, /*kernel=*/false);
        const steps::StepWithTerms b = steps::bf16PlainStepWithTerms(ours, k, 7, /*kernel=*/true);
        at::set_num_threads(threads);
        QVERIFY(a.terms[1].item<double>() > 0);  // some updates rounded away: the sums see both kinds
        QVERIFY2(torch::equal(a.terms, b.terms), h.name);
        QVERIFY(torch::equal(a.windowSample, b.windowSample));
        QVERIFY(bitsOrBothNan(ours.param, ops.param));
        QVERIFY(bitsOrBothNan(ours.m, ops.m));
        QVERIFY(bitsOrBothNan(ours.v, ops.v));
      }
  }

  // A window step (no statistics): the kernel copies the window's elements
  // during its pass; the same intended-update sample, weights and moments as
  // torch's ops after strided reads, for strides that fall on block
  // boundaries and not, and on every element (stride 1).
  void windowSampleIsTheTensorOpBits() {
    const int64_t n = 3 * kernels::kCpuBlock + 77;
    for (const int64_t stride : {int64_t(1), int64_t(7), int64_t(64), int64_t(590), n + 5})
      for (const Hyper& h : {kHypers[0], kHypers[2]}) {
        steps::ParamState ops = stateOf(n, 17);
        steps::ParamState ours = copyOf(ops);
        const steps::StepScalars k = scalarsOf(h, 4);
        const torch::Tensor a = steps::bf16PlainStepWithSampledIntended(ops, k, stride, /*kernel=*/false);
        const torch::Tensor b = steps::bf16PlainStepWithSampledIntended(ours, k, stride, /*kernel=*/true);
        const QString where = QString("stride %1, %2").arg(stride).arg(h.name);
        QVERIFY2(a.numel() == (n + stride - 1) / stride && a.scalar_type() == torch::kFloat64, qPrintable(where));
        QVERIFY2(torch::equal(a.isnan(), b.isnan()), qPrintable(where));
        QVERIFY2(torch::equal(a.nan_to_num(0, 0, 0).view(torch::kInt64), b.nan_to_num(0, 0, 0).view(torch::kInt64)),
                 qPrintable(where));
        QVERIFY(bitsOrBothNan(ours.param, ops.param) && bitsOrBothNan(ours.m, ops.m) && bitsOrBothNan(ours.v, ops.v));
      }
  }

  // Through PrecisionAdamW: adamw.kernels "fused" (the kernel) and
  // "reference" (torch's ops) give the same run, statistics and window
  // included; a non-contiguous parameter takes torch's ops either way.
  void optimizerRunsTheKernelWithTheSameBits() {
    bool sawStrided = false;
    const auto run = [&sawStrided](StepKernels kernels) {
      torch::manual_seed(21);
      std::vector<torch::Tensor> weights = {(0.1 * torch::randn({64, 33})).to(torch::kBFloat16),
                                            (0.1 * torch::randn({1031})).to(torch::kBFloat16),
                                            (0.1 * torch::randn({40, 6})).to(torch::kBFloat16).t()};
      sawStrided = !weights[2].is_contiguous();
      std::vector<TrainableParam> params;
      for (size_t i = 0; i < weights.size(); ++i) {
        weights[i].set_requires_grad(true);
        params.push_back({"p" + std::to_string(i), "layer" + std::to_string(i), weights[i], {}});
      }
      AdamWOptions o;
      o.lr = 1e-2;
      o.weight_decay = 0.1;
      o.kernels = kernels;
      o.torchStep = TorchStep::ForLoop;
      UpdateStatsOptions statsOptions;
      statsOptions.window = 4;
      PrecisionAdamW opt(params, OptimizerMode::Bf16Plain, o, 0, statsOptions);
      std::vector<double> sums;
      for (int t = 1; t <= 12; ++t) {
        torch::manual_seed(300 + t);
        for (auto& w : weights) w.mutable_grad() = torch::randn(w.sizes()).to(torch::kBFloat16);
        const OptimizerStepStats s = opt.step(o.lr, t % 3 == 0);
        for (const auto& l : s.layers) sums.insert(sums.end(), {double(l.roundedAway), l.intendedNormSq, l.effectiveNormSq});
        for (const auto& w : s.window) sums.insert(sums.end(), {w.residualDotIntended, w.intendedSumSq, w.residualSq});
        opt.zeroGrad();
      }
      std::vector<torch::Tensor> out;
      for (auto& w : weights) out.push_back(w.detach().contiguous().clone());
      for (auto& [name, t] : opt.stateTensors()) out.push_back(t.contiguous());
      out.push_back(torch::tensor(sums, torch::kFloat64));
      return out;
    };
    const std::vector<torch::Tensor> kernel = run(StepKernels::Fused), ops = run(StepKernels::Reference);
    QVERIFY(sawStrided);
    QCOMPARE(kernel.size(), ops.size());
    for (size_t i = 0; i < kernel.size(); ++i) QVERIFY2(torch::equal(kernel[i], ops[i]), qPrintable(QString::number(i)));
  }
};

PLAB_TEST_MAIN(TorchForloopBf16Test)

}  // namespace test_torch_forloop_bf16

#include "test_torch_forloop_bf16.moc"
