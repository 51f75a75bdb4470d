// "mixed": exact fp32 AdamW on the master copy; the model's bf16 compute
// weights are re-rounded from it. The intended update is the master's change;
// the statistics measure what of it reaches the bf16 copy the forward uses.
#include "precision/steps/adamw_step.h"

namespace plab::steps {

torch::Tensor masterStep(ParamState& p, const StepScalars& s, const torch::Tensor& before32) {
  const torch::Tensor masterBefore = before32.defined() ? p.master.clone() : torch::Tensor();
  elementOrderAdamwInPlace(p.master, p.grad.to(torch::kFloat32), p.m, p.v, s);
  p.param.copy_(p.master);
  return before32.defined() ? exactDifference(p.master, masterBefore) : torch::Tensor();
}

}  // namespace plab::steps
