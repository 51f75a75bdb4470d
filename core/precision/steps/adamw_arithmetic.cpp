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

void elementOrderAdamwInPlace(const torch::Tensor& w, const torch::Tensor& grad, const torch::Tensor& m,
                              const torch::Tensor& v, const StepScalars& s) {
  if (s.weightDecay != 0) w.mul_(1 - s.lr * s.weightDecay);
  m.mul_(s.beta1).add_(grad, 1 - s.beta1);
  v.mul_(s.beta2).addcmul_(grad, grad, 1 - s.beta2);
  const torch::Tensor denom = (v.sqrt() / std::sqrt(s.biasCorrection2())).add_(s.eps);
  w.addcdiv_(m, denom, -s.lr / s.biasCorrection1());
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
