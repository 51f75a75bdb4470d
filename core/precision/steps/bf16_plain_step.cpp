// "bf16": the recipe users run when they call model.to(torch.bfloat16) and
// step torch's AdamW: the same operations as fp32, each rounding to bf16.
#include "precision/steps/adamw_step.h"

namespace plab::steps {

void bf16PlainStep(ParamState& p, const StepScalars& s) { torchOptimAdamwInPlace(p.param, p.grad, p.m, p.v, s); }

}  // namespace plab::steps
