// "fp32": torch::optim::AdamW exactly. The intended update is by definition
// the change fp32 makes, so the update statistics of fp32 read exactly zero.
#include "precision/steps/adamw_step.h"

namespace plab::steps {

torch::Tensor fp32Step(ParamState& p, const StepScalars& s, const torch::Tensor& before32) {
  adamwInPlace(p.param, p.grad, p.m, p.v, s);
  return before32.defined() ? exactDifference(p.param, before32) : torch::Tensor();
}

}  // namespace plab::steps
