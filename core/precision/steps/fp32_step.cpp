// "fp32": torch::optim::AdamW exactly. The intended update is by definition
// the change fp32 makes, so the update statistics of fp32 read exactly zero.
#include "precision/kernels/change_sums_cpu.h"
#include "precision/steps/adamw_step.h"

namespace plab::steps {

torch::Tensor fp32Step(ParamState& p, const StepScalars& s, const torch::Tensor& before32) {
  adamwInPlace(p.param, p.grad, p.m, p.v, s);
  return before32.defined() ? exactDifference(p.param, before32) : torch::Tensor();
}

torch::Tensor fp32ChangeTerms(const torch::Tensor& before, const torch::Tensor& after) {
  const bool onePass = before.is_cpu() && after.is_cpu() && before.scalar_type() == torch::kFloat32 &&
                       after.scalar_type() == torch::kFloat32 && before.is_contiguous() && after.is_contiguous();
  if (!onePass) return stepTerms(exactDifference(after, before), before, after);
  const kernels::StepSums s = kernels::fp32ChangeSumsCpu(before.data_ptr<float>(), after.data_ptr<float>(), after.numel());
  return torch::tensor({s.intendedNonZero, s.roundedAway, s.intendedSq, s.changeSq, static_cast<double>(after.numel())},
                       torch::TensorOptions().dtype(torch::kFloat64));
}

}  // namespace plab::steps
