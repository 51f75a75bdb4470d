// Glue between torch tensors and the fused kernels (precision/kernels/):
// checks what the kernels need, hands them raw pointers, and puts the
// statistics into the step-terms layout of precision_adamw.cpp.
#include <cmath>

#include "precision/steps/adamw_step.h"

#ifdef PLAB_HAVE_CUDA_KERNELS
#include <c10/cuda/CUDAStream.h>
#endif

namespace plab::steps {
namespace {

kernels::AdamWScalars scalarsOf(const StepScalars& s) {
  kernels::AdamWScalars k;
  k.decay = s.weightDecay != 0 ? static_cast<float>(1 - s.lr * s.weightDecay) : 1.0f;
  k.beta1 = static_cast<float>(s.beta1);
  k.oneMinusBeta1 = static_cast<float>(1 - s.beta1);
  k.beta2 = static_cast<float>(s.beta2);
  k.oneMinusBeta2 = static_cast<float>(1 - s.beta2);
  k.sqrtBiasCorrection2 = static_cast<float>(std::sqrt(s.biasCorrection2()));
  k.eps = static_cast<float>(s.eps);
  k.negStepSize = static_cast<float>(-s.lr / s.biasCorrection1());
  return k;
}

kernels::MomentStore momentStoreOf(const ParamState& p, MomentPrecision moments) {
  if (p.m.scalar_type() == torch::kFloat32) return kernels::MomentStore::Fp32;
  return moments == MomentPrecision::Bf16Stochastic ? kernels::MomentStore::Bf16Stochastic
                                                    : kernels::MomentStore::Bf16Nearest;
}

bool onSupportedDevice(const torch::Tensor& t) {
  if (t.is_cpu()) return true;
#ifdef PLAB_HAVE_CUDA_KERNELS
  return t.is_cuda();
#else
  return false;
#endif
}

uint16_t* bf16Bits(const torch::Tensor& t) { return reinterpret_cast<uint16_t*>(t.data_ptr<at::BFloat16>()); }

}  // namespace

bool fusedStepRuns(const ParamState& p) {
  const auto bf16Contiguous = [](const torch::Tensor& t) {
    return t.defined() && t.scalar_type() == torch::kBFloat16 && t.is_contiguous();
  };
  return bf16Contiguous(p.param) && p.grad.defined() && p.grad.scalar_type() == torch::kBFloat16 &&
         !p.grad.is_sparse() && onSupportedDevice(p.param) && p.grad.device() == p.param.device();
}

torch::Tensor fusedStep(ParamState& p, const StepScalars& s, kernels::WeightRule rule, MomentPrecision moments,
                        const FusedExtras& extras) {
  // Autograd's gradients are contiguous; anything else is copied once.
  const torch::Tensor grad = p.grad.contiguous();
  kernels::FusedAdamWArgs a;
  a.n = p.param.numel();
  a.rule = rule;
  a.moments = momentStoreOf(p, moments);
  a.param = bf16Bits(p.param);
  a.grad = bf16Bits(grad);
  a.m = p.m.data_ptr();
  a.v = p.v.data_ptr();
  if (rule == kernels::WeightRule::Master) a.master = p.master.data_ptr<float>();
  if (rule == kernels::WeightRule::Kahan) a.comp = bf16Bits(p.comp);
  a.s = scalarsOf(s);
  a.random = extras.random;
  if (extras.windowSum.defined()) {
    a.windowSum = extras.windowSum.data_ptr<double>();
    a.windowStride = extras.windowStride;
  }
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64);
  const auto numel = static_cast<double>(a.n);
#ifdef PLAB_HAVE_CUDA_KERNELS
  if (p.param.is_cuda()) {
    torch::Tensor terms = extras.stats ? torch::zeros({5}, f64.device(p.param.device())) : torch::Tensor();
    const auto stream = c10::cuda::getCurrentCUDAStream(p.param.device().index()).stream();
    kernels::fusedAdamWCuda(a, extras.stats ? terms.data_ptr<double>() : nullptr, stream);
    if (extras.stats) terms[4].fill_(numel);
    return terms;
  }
#endif
  kernels::StepSums sums;
  kernels::fusedAdamWCpu(a, extras.stats ? &sums : nullptr);
  if (!extras.stats) return torch::Tensor();
  return torch::tensor({sums.intendedNonZero, sums.roundedAway, sums.intendedSq, sums.changeSq, numel}, f64);
}

}  // namespace plab::steps
