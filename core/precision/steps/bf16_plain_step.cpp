// "bf16": the recipe users run when they call model.to(torch.bfloat16) and
// step torch's AdamW: the same operations as fp32, each rounding to bf16.
#include "precision/steps/adamw_step.h"

namespace plab::steps {

torch::Tensor bf16PlainStep(ParamState& p, const StepScalars& s, const torch::Tensor& before32) {
  // What fp32 arithmetic would make of the same inputs (state read before
  // the bf16 step changes it): only for the statistics.
  const torch::Tensor intended = before32.defined() ? fp32Intended(before32, p.grad, p.m, p.v, s) : torch::Tensor();
  adamwInPlace(p.param, p.grad, p.m, p.v, s);
  return intended;
}

}  // namespace plab::steps
