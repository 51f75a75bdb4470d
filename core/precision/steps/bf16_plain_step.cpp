// "bf16": the recipe users run when they call model.to(torch.bfloat16) and
// step torch's AdamW: the same operations as fp32, each rounding to bf16.
#include <ATen/Version.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <vector>

#include "precision/kernels/bf16_bits.h"
#include "precision/kernels/change_sums_cpu.h"
#include "precision/kernels/fused_adamw_cpu.h"
#include "precision/kernels/torch_forloop_bf16.h"
#include "precision/steps/adamw_step.h"

namespace plab::steps {
namespace {

bool cpuContiguousBf16(const torch::Tensor& t) {
  return t.defined() && t.is_cpu() && t.is_contiguous() && t.scalar_type() == torch::kBFloat16;
}

// The kernel reproduces ATen's AVX2 / AVX-512 kernels, which fuse the lerp's
// and addcmul's multiply-adds; its portable ones (and other CPUs' vector
// kernels) do not, and keep the tensor-op form.
bool atenFusesMultiplyAdds() {
#if defined(__x86_64__) || defined(_M_X64)
  static const bool fuses = at::get_cpu_capability() != "DEFAULT";
  return fuses;
#else
  return false;
#endif
}

}  // namespace

bool torchForloopBf16Runs(const ParamState& p) {
  return cpuContiguousBf16(p.param) && cpuContiguousBf16(p.grad) && cpuContiguousBf16(p.m) &&
         cpuContiguousBf16(p.v) && atenFusesMultiplyAdds();
}

// Each Python float converted to fp32 as ATen's kernels take it; beyond
// fp32's range torch's checked conversion would throw, and the tensor-op
// form runs (and does); so it does for a NaN (the kernel's rounding passes
// only NaNs whose low 16 bits are zero).
bool torchForloopBf16Scalars(const StepScalars& s, kernels::TorchForloopBf16Scalars& k) {
  const double stepSize = s.lr / s.biasCorrection1();
  const double values[] = {1 - s.lr * s.weightDecay, 1 - s.beta1, s.beta2, 1 - s.beta2,
                           std::pow(s.biasCorrection2(), 0.5), s.eps, -stepSize};
  for (const double x : values)
    if (std::isnan(x) || (std::isfinite(x) && std::fabs(x) > FLT_MAX)) return false;
  k.decay = s.weightDecay != 0 ? static_cast<float>(values[0]) : 1.0f;
  k.lerpWeight = static_cast<float>(values[1]);
  k.lerpSmall = std::fabs(k.lerpWeight) < 0.5f;
  // beta1 = 0: ATen's vectorised lerp adds (w - 1) (g - m) = +0 (g - m) to
  // g, its scalar remainder subtracts (g - m) (1 - w), the same product of
  // the other sign: -0 and +0 results differ, by where the remainder falls.
  if (k.lerpWeight == 1.0f) return false;
  k.beta2 = static_cast<float>(values[2]);
  k.oneMinusBeta2 = static_cast<float>(values[3]);
  k.sqrtBiasCorrection2 = static_cast<float>(values[4]);
  // add_'s scalar becomes a bf16 tensor first (TensorIterator casts it to
  // the common dtype; mul and div read the original value instead).
  k.eps = kernels::bf16ToFloat(kernels::bf16Nearest(static_cast<float>(values[5])));
  k.eps32 = static_cast<float>(values[5]);
  k.negStepSize = static_cast<float>(values[6]);
  return true;
}

void bf16PlainStep(ParamState& p, const StepScalars& s, bool kernel) {
  kernels::TorchForloopBf16Args a;
  if (kernel && torchForloopBf16Runs(p) && torchForloopBf16Scalars(s, a.s)) {
    a.n = p.param.numel();
    a.param = reinterpret_cast<uint16_t*>(p.param.data_ptr<at::BFloat16>());
    a.grad = reinterpret_cast<const uint16_t*>(p.grad.data_ptr<at::BFloat16>());
    a.m = reinterpret_cast<uint16_t*>(p.m.data_ptr<at::BFloat16>());
    a.v = reinterpret_cast<uint16_t*>(p.v.data_ptr<at::BFloat16>());
    kernels::torchForloopBf16Cpu(a);
    return;
  }
  torchOptimAdamwInPlace(p.param, p.grad, p.m, p.v, s);
}

namespace {

// Elements per piece of the statistics: fp32 pieces of 256 KiB that stay in
// cache, a multiple of kCpuBlock (addStepSumsCpu's condition) and of every
// vector width, so that each operation splits into the same vector body and
// remainder as on the whole tensor.
constexpr int64_t kPiece = 4 * kernels::kCpuBlock;

bool onCpuContiguous(const torch::Tensor& t) { return t.is_cpu() && t.is_contiguous(); }

// Every stride-th element of t, flattened (UpdateWindow::sample's selection).
torch::Tensor everyStrideth(const torch::Tensor& t, int64_t stride) {
  const torch::Tensor flat = t.reshape({-1});
  return flat.slice(0, 0, flat.numel(), stride);
}

torch::Tensor termsOf(const kernels::StepSums& sums, int64_t n) {
  return torch::tensor({sums.intendedNonZero, sums.roundedAway, sums.intendedSq, sums.changeSq,
                        static_cast<double>(n)},
                       torch::TensorOptions().dtype(torch::kFloat64));
}

torch::Tensor fp32Copy(const torch::Tensor& t) { return t.to(torch::kFloat32, false, /*copy=*/true); }

// The kernel's statistics step, one piece at a time. The kernel's pass also
// writes the piece's weights before and after the step in fp32 and the
// first part of the fp32 reference (fp32IntendedWeights' operations, rounded
// as torch's fp32 kernels round them); torch's own fp32 square root (MKL's,
// which is not correctly rounded and not reproduced here) runs on the
// piece's v, then the reference's end gives the intended weights; the sums
// are added in block order and the window's elements of the piece taken.
// The same bits as torch's ops on fp32 copies of the whole tensor, and
// nothing of the tensor's size allocated.
StepWithTerms kernelStepWithTerms(ParamState& p, const kernels::TorchForloopBf16Scalars& k, int64_t windowStride) {
  const int64_t n = p.param.numel();
  const auto options = p.param.options().dtype(torch::kFloat32);
  const int64_t room = std::min(kPiece, n);
  const torch::Tensor before32 = torch::empty({room}, options), after32 = torch::empty({room}, options),
                      weight32 = torch::empty({room}, options), m32 = torch::empty({room}, options),
                      v32 = torch::empty({room}, options);
  const auto bits = [](const torch::Tensor& t) { return reinterpret_cast<uint16_t*>(t.data_ptr<at::BFloat16>()); };
  std::vector<torch::Tensor> samples;
  kernels::StepSums sums;
  kernels::TorchForloopBf16Args a;
  a.s = k;
  a.refBefore = before32.data_ptr<float>();
  a.refAfter = after32.data_ptr<float>();
  a.refWeight = weight32.data_ptr<float>();
  a.refM = m32.data_ptr<float>();
  for (int64_t start = 0; start < n; start += kPiece) {
    const int64_t len = std::min(kPiece, n - start);
    a.n = len;
    a.param = bits(p.param) + start;
    a.grad = bits(p.grad) + start;
    a.m = bits(p.m) + start;
    a.v = bits(p.v) + start;
    a.refV = v32.data_ptr<float>();
    kernels::torchForloopBf16Cpu(a);
    const torch::Tensor root = v32.narrow(0, 0, len).sqrt();  // as torchOptimAdamwInPlace's v.sqrt()
    a.refV = root.data_ptr<float>();
    kernels::torchForloopFp32ReferenceEndCpu(a);
    kernels::addStepSumsCpu(sums, a.refBefore, a.refWeight, a.refAfter, len);
    if (windowStride > 0) {
      const int64_t first = (start + windowStride - 1) / windowStride * windowStride - start;
      if (first < len)
        samples.push_back(exactDifference(weight32.slice(0, first, len, windowStride),
                                          before32.slice(0, first, len, windowStride)));
    }
  }
  StepWithTerms out;
  if (windowStride > 0) out.windowSample = torch::cat(samples);
  out.terms = termsOf(sums, n);
  return out;
}

}  // namespace

torch::Tensor bf16PlainStepWithSampledIntended(ParamState& p, const StepScalars& s, int64_t windowStride, bool kernel) {
  kernels::TorchForloopBf16Args a;
  if (kernel && torchForloopBf16Runs(p) && torchForloopBf16Scalars(s, a.s)) {
    a.n = p.param.numel();
    const int64_t count = (a.n + windowStride - 1) / windowStride;
    const torch::Tensor w = torch::empty({count}, p.param.options()), g = torch::empty({count}, p.param.options()),
                        m = torch::empty({count}, p.param.options()), v = torch::empty({count}, p.param.options());
    const auto bits = [](const torch::Tensor& t) { return reinterpret_cast<uint16_t*>(t.data_ptr<at::BFloat16>()); };
    a.param = bits(p.param);
    a.grad = bits(p.grad);
    a.m = bits(p.m);
    a.v = bits(p.v);
    a.sampleStride = windowStride;
    a.sampleParam = bits(w);
    a.sampleGrad = bits(g);
    a.sampleM = bits(m);
    a.sampleV = bits(v);
    kernels::torchForloopBf16Cpu(a);
    return fp32Intended(w, g, m, v, s);
  }
  const torch::Tensor intended = fp32Intended(everyStrideth(p.param, windowStride), everyStrideth(p.grad, windowStride),
                                              everyStrideth(p.m, windowStride), everyStrideth(p.v, windowStride), s);
  bf16PlainStep(p, s, kernel);
  return intended;
}

StepWithTerms bf16PlainStepWithTerms(ParamState& p, const StepScalars& s, int64_t windowStride, bool kernel) {
  const torch::Tensor& w = p.param;
  kernels::TorchForloopBf16Scalars k;
  if (kernel && torchForloopBf16Runs(p) && torchForloopBf16Scalars(s, k)) return kernelStepWithTerms(p, k, windowStride);
  if (!onCpuContiguous(w) || !onCpuContiguous(p.grad) || !onCpuContiguous(p.m) || !onCpuContiguous(p.v)) {
    // Whole tensors: fp32 copies of the weights before the step and of what fp32 arithmetic intended.
    const torch::Tensor before = fp32Copy(w);
    const torch::Tensor intendedAfter = fp32IntendedWeights(before, p.grad, p.m, p.v, s);
    bf16PlainStep(p, s, kernel);
    StepWithTerms out;
    if (windowStride > 0)
      out.windowSample =
          exactDifference(everyStrideth(intendedAfter, windowStride), everyStrideth(before, windowStride));
    out.terms = stepTermsOnePass(before, intendedAfter, w.to(torch::kFloat32));
    return out;
  }
  // torch's ops: the fp32 reference a piece at a time (fp32 copies of a
  // piece, not of the tensor), the step on the whole tensor as without
  // statistics, then the sums piece by piece in block order. Held
  // meanwhile: the intended weights in fp32 and the weights before the step
  // in their own dtype (exact in fp32).
  const int64_t n = w.numel();
  const torch::Tensor flatW = w.view({-1}), flatG = p.grad.view({-1}), flatM = p.m.view({-1}), flatV = p.v.view({-1});
  const torch::Tensor before = flatW.clone();
  const torch::Tensor intendedAfter = torch::empty({n}, w.options().dtype(torch::kFloat32));
  for (int64_t a = 0; a < n; a += kPiece) {
    const int64_t len = std::min(kPiece, n - a);
    torch::Tensor w32 = intendedAfter.narrow(0, a, len);
    w32.copy_(flatW.narrow(0, a, len));
    torchOptimAdamwInPlace(w32, fp32Copy(flatG.narrow(0, a, len)), fp32Copy(flatM.narrow(0, a, len)),
                           fp32Copy(flatV.narrow(0, a, len)), s);
  }
  bf16PlainStep(p, s, kernel);
  StepWithTerms out;
  if (windowStride > 0)
    out.windowSample = exactDifference(everyStrideth(intendedAfter, windowStride), everyStrideth(before, windowStride));
  kernels::StepSums sums;
  for (int64_t a = 0; a < n; a += kPiece) {
    const int64_t len = std::min(kPiece, n - a);
    const torch::Tensor before32 = before.narrow(0, a, len).to(torch::kFloat32);
    const torch::Tensor after32 = flatW.narrow(0, a, len).to(torch::kFloat32);
    kernels::addStepSumsCpu(sums, before32.data_ptr<float>(), intendedAfter.data_ptr<float>() + a,
                            after32.data_ptr<float>(), len);
  }
  out.terms = termsOf(sums, n);
  return out;
}

}  // namespace plab::steps
