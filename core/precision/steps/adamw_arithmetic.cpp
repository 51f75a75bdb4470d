// The AdamW arithmetic every step rule shares, and its scalars.
#include <ATen/ScalarOps.h>

#include <cmath>

#include "precision/kernels/change_sums_cpu.h"
#include "precision/steps/adamw_step.h"

namespace plab::steps {

double StepScalars::biasCorrection1() const { return 1 - std::pow(beta1, static_cast<double>(step)); }
double StepScalars::biasCorrection2() const { return 1 - std::pow(beta2, static_cast<double>(step)); }

namespace {

// A Python float as Python hands it to a tensor operator: a 0-dim double
// tensor marked as a wrapped number (Tensor overloads, opmath in fp32 for
// bf16 tensors). The C++ Scalar overloads can differ on bf16 tensors.
torch::Tensor pythonNumber(double x) { return at::native::wrapped_scalar_tensor(x); }

}  // namespace

void torchOptimAdamwInPlace(const torch::Tensor& w, const torch::Tensor& grad, const torch::Tensor& m,
                            const torch::Tensor& v, const StepScalars& s) {
  if (s.weightDecay != 0) w.mul_(pythonNumber(1 - s.lr * s.weightDecay));
  m.lerp_(grad, 1 - s.beta1);
  v.mul_(pythonNumber(s.beta2)).addcmul_(grad, grad, 1 - s.beta2);
  const double stepSize = s.lr / s.biasCorrection1();
  const double biasCorrection2Sqrt = std::pow(s.biasCorrection2(), 0.5);  // Python's ** 0.5
  const torch::Tensor denom = v.sqrt().div(pythonNumber(biasCorrection2Sqrt)).add_(pythonNumber(s.eps));
  w.addcdiv_(m, denom, -stepSize);
}

// Every operation here is one fp32 multiplication, division, addition or
// square root, correctly rounded once, on any CPU, as in the kernels. What
// torch's obvious ops would do instead (measured with LibTorch 2.13 CPU):
// add_ with alpha != 1 and addcmul_ fuse their multiply-add in the AVX2 and
// AVX-512 kernels (not in the default ones); addcdiv_ computes
// (value * m) / denom, not value * (m / denom); and fp32 sqrt is off by one
// ulp in about 20 % of the elements its vectorised loop takes. A tensor's
// add_ with alpha 1 is fma(b, 1, a), a + b rounded once; fp64 sqrt rounded
// to fp32 is fp32's correctly rounded sqrt (the fp64 result is within an fp64
// ulp, and the square root of an fp32 number is never that close to a
// midpoint between two fp32 numbers).
void elementOrderAdamwInPlace(const torch::Tensor& w, const torch::Tensor& grad, const torch::Tensor& m,
                              const torch::Tensor& v, const StepScalars& s) {
  if (s.weightDecay != 0) w.mul_(1 - s.lr * s.weightDecay);
  m.mul_(s.beta1).add_(grad.mul(1 - s.beta1));
  v.mul_(s.beta2).add_(grad.mul(1 - s.beta2).mul_(grad));
  const torch::Tensor sqrtV = v.to(torch::kFloat64).sqrt_().to(torch::kFloat32);
  const torch::Tensor denom = sqrtV.div_(std::sqrt(s.biasCorrection2())).add_(s.eps);
  w.add_(m.div(denom).mul_(-s.lr / s.biasCorrection1()));
}

torch::Tensor exactDifference(const torch::Tensor& after, const torch::Tensor& before) {
  return after.to(torch::kFloat64) - before.to(torch::kFloat64);
}

torch::Tensor stepTerms(const torch::Tensor& intended, const torch::Tensor& before32, const torch::Tensor& after32) {
  const torch::Tensor nonZero = intended.ne(0);
  const torch::Tensor roundedAway = nonZero.logical_and(after32.eq(before32));
  return torch::stack({nonZero.sum().to(torch::kFloat64), roundedAway.sum().to(torch::kFloat64),
                       intended.square().sum(torch::kFloat64), exactDifference(after32, before32).square().sum(),
                       torch::scalar_tensor(static_cast<double>(intended.numel()), intended.options().dtype(torch::kFloat64))});
}

torch::Tensor fp32IntendedWeights(const torch::Tensor& w, const torch::Tensor& grad, const torch::Tensor& m,
                                  const torch::Tensor& v, const StepScalars& s) {
  const auto copy32 = [](const torch::Tensor& t) { return t.to(torch::kFloat32, false, /*copy=*/true); };
  torch::Tensor w32 = copy32(w);
  torchOptimAdamwInPlace(w32, copy32(grad), copy32(m), copy32(v), s);
  return w32;
}

torch::Tensor fp32Intended(const torch::Tensor& w, const torch::Tensor& grad, const torch::Tensor& m,
                           const torch::Tensor& v, const StepScalars& s) {
  return exactDifference(fp32IntendedWeights(w, grad, m, v, s), w);
}

torch::Tensor stepTermsOnePass(const torch::Tensor& before, const torch::Tensor& intendedAfter,
                               const torch::Tensor& after) {
  const auto cpuFp32 = [](const torch::Tensor& t) {
    return t.is_cpu() && t.scalar_type() == torch::kFloat32 && t.is_contiguous();
  };
  if (!cpuFp32(before) || !cpuFp32(intendedAfter) || !cpuFp32(after))
    return stepTerms(exactDifference(intendedAfter, before), before, after);
  const kernels::StepSums s = kernels::stepSumsCpu(before.data_ptr<float>(), intendedAfter.data_ptr<float>(),
                                                   after.data_ptr<float>(), after.numel());
  return torch::tensor({s.intendedNonZero, s.roundedAway, s.intendedSq, s.changeSq, static_cast<double>(after.numel())},
                       torch::TensorOptions().dtype(torch::kFloat64));
}

}  // namespace plab::steps
