// "bf16-nearest", "bf16-kahan", "bf16-sr": fp32 update math on upcast state,
// then one rounded write of the moments and of the weight.
#include "precision/bf16_rounding.h"
#include "precision/steps/adamw_step.h"

namespace plab::steps {
namespace {

void writeMoment(const torch::Tensor& stored, const torch::Tensor& value32, MomentPrecision moments,
                 const kernels::RandomStream& random) {
  if (stored.scalar_type() == torch::kFloat32) return;  // updated in place already
  if (moments == MomentPrecision::Bf16Stochastic)
    stored.copy_(roundToBf16Stochastic(value32, philoxRandom16(value32.numel(), random, value32.device())));
  else
    stored.copy_(value32);  // round to nearest even
}

}  // namespace

torch::Tensor bf16WriteStep(ParamState& p, const StepScalars& s, WeightWrite write, MomentPrecision moments,
                            const kernels::RandomStream& random, const torch::Tensor& before32) {
  const torch::Tensor before = before32.defined() ? before32 : p.param.to(torch::kFloat32);
  const bool fp32Moments = p.m.scalar_type() == torch::kFloat32;
  const torch::Tensor m32 = fp32Moments ? p.m : p.m.to(torch::kFloat32);
  const torch::Tensor v32 = fp32Moments ? p.v : p.v.to(torch::kFloat32);
  torch::Tensor wNew = before.clone();
  elementOrderAdamwInPlace(wNew, p.grad.to(torch::kFloat32), m32, v32, s);
  kernels::RandomStream stream = random;
  stream.stream = random.stream + 1;
  writeMoment(p.m, m32, moments, stream);
  stream.stream = random.stream + 2;
  writeMoment(p.v, v32, moments, stream);

  switch (write) {
    case WeightWrite::Nearest:
      p.param.copy_(wNew);
      break;
    case WeightWrite::Kahan: {
      // The buffer holds what earlier writes lost; it joins this update, and
      // what this write loses in turn goes back into it.
      const KahanWrite k = kahanBf16Write(before, p.comp.to(torch::kFloat32), wNew - before);
      p.comp.copy_(k.compensation);
      p.param.copy_(k.written);
      break;
    }
    case WeightWrite::Stochastic:
      p.param.copy_(roundToBf16Stochastic(wNew, philoxRandom16(wNew.numel(), random, wNew.device())));
      break;
  }
  return before32.defined() ? exactDifference(wNew, before32) : torch::Tensor();
}

}  // namespace plab::steps
