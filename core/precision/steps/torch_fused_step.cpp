// Glue between torch tensors and torch_fused_adamw.h's CPU kernel: torch's
// double hyper-parameters turned into the fp32 values ATen's fused kernel
// uses, raw pointers, and the statistics in the step-terms layout.
#include <cmath>

#include "precision/kernels/torch_fused_adamw.h"
#include "precision/steps/adamw_step.h"

namespace plab::steps {
namespace {

// As ATen's adam_fused_step_impl derives them: bias corrections in double
// (std::pow with the step as a double), each value cast to fp32 once.
kernels::TorchFusedScalars torchFusedScalarsOf(const StepScalars& s) {
  kernels::TorchFusedScalars k;
  k.decay = static_cast<float>(1 - s.lr * s.weightDecay);
  k.lerpWeight = static_cast<float>(1 - s.beta1);
  k.lerpSmall = std::fabs(k.lerpWeight) < 0.5f;
  k.beta2 = static_cast<float>(s.beta2);
  k.oneMinusBeta2 = static_cast<float>(1 - s.beta2);
  k.sqrtBiasCorrection2 = static_cast<float>(std::sqrt(s.biasCorrection2()));
  k.eps = static_cast<float>(s.eps);
  k.negStepSize = static_cast<float>(-(s.lr / s.biasCorrection1()));
  return k;
}

}  // namespace

bool torchFusedStepRuns(const ParamState& p) {
  if (!p.param.defined() || !p.param.is_cpu() || !p.param.is_contiguous()) return false;
  const auto type = p.param.scalar_type();
  if (type != torch::kFloat32 && type != torch::kBFloat16) return false;
  const auto same = [&](const torch::Tensor& t) {
    return t.defined() && t.device() == p.param.device() && t.scalar_type() == type && !t.is_sparse() &&
           t.numel() == p.param.numel();
  };
  return same(p.grad) && same(p.m) && same(p.v) && p.m.is_contiguous() && p.v.is_contiguous();
}

torch::Tensor torchFusedStep(ParamState& p, const StepScalars& s, const FusedExtras& extras) {
  // Autograd's gradients are contiguous; anything else is copied once (as ATen does).
  const torch::Tensor grad = p.grad.contiguous();
  kernels::TorchFusedAdamWArgs a;
  a.n = p.param.numel();
  a.type = p.param.scalar_type() == torch::kFloat32 ? kernels::TorchParamType::Fp32 : kernels::TorchParamType::Bf16;
  a.param = p.param.data_ptr();
  a.grad = grad.data_ptr();
  a.m = p.m.data_ptr();
  a.v = p.v.data_ptr();
  a.s = torchFusedScalarsOf(s);
  a.scalarFrom = kernels::torchScalarTailStart(a.n, a.type);
  if (extras.windowSum.defined()) {
    a.windowSum = extras.windowSum.data_ptr<double>();
    a.windowStride = extras.windowStride;
  }
  kernels::StepSums sums;
  kernels::torchFusedAdamWCpu(a, extras.stats ? &sums : nullptr);
  if (!extras.stats) return torch::Tensor();
  return torch::tensor({sums.intendedNonZero, sums.roundedAway, sums.intendedSq, sums.changeSq, static_cast<double>(a.n)},
                       torch::TensorOptions().dtype(torch::kFloat64));
}

}  // namespace plab::steps
