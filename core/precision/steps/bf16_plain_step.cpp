// "bf16": the recipe users run when they call model.to(torch.bfloat16) and
// step torch's AdamW: the same operations as fp32, each rounding to bf16.
#include "precision/steps/adamw_step.h"

namespace plab::steps {

torch::Tensor bf16PlainStep(ParamState& p, const StepScalars& s, const torch::Tensor& before32) {
  torch::Tensor intended;
  if (before32.defined()) {
    // What fp32 arithmetic would make of the same inputs (state read before
    // the bf16 step changes it): only for the statistics.
    torch::Tensor w32 = before32.clone();
    const auto copy32 = [](const torch::Tensor& t) { return t.to(torch::kFloat32, false, /*copy=*/true); };
    adamwInPlace(w32, copy32(p.grad), copy32(p.m), copy32(p.v), s);
    intended = exactDifference(w32, before32);
  }
  adamwInPlace(p.param, p.grad, p.m, p.v, s);
  return intended;
}

}  // namespace plab::steps
