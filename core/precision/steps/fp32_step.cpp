// "fp32": torch::optim::AdamW exactly. The intended update is by definition
// the change fp32 makes, so the update statistics of fp32 read exactly zero.
#include "precision/steps/adamw_step.h"

namespace plab::steps {

void fp32Step(ParamState& p, const StepScalars& s) { torchOptimAdamwInPlace(p.param, p.grad, p.m, p.v, s); }

}  // namespace plab::steps
