// "bf16": the recipe users run when they call model.to(torch.bfloat16) and
// step torch's AdamW: the same operations as fp32, each rounding to bf16.
#include <algorithm>

#include "precision/kernels/change_sums_cpu.h"
#include "precision/kernels/fused_adamw_cpu.h"
#include "precision/steps/adamw_step.h"

namespace plab::steps {

void bf16PlainStep(ParamState& p, const StepScalars& s) { torchOptimAdamwInPlace(p.param, p.grad, p.m, p.v, s); }

namespace {

// Elements per piece of the statistics: fp32 pieces of 256 KiB that stay in
// cache, a multiple of kCpuBlock (addStepSumsCpu's condition) and of every
// vector width, so that each operation splits into the same vector body and
// remainder as on the whole tensor.
constexpr int64_t kPiece = 4 * kernels::kCpuBlock;

bool onCpuContiguous(const torch::Tensor& t) { return t.is_cpu() && t.is_contiguous(); }

}  // namespace

StepWithTerms bf16PlainStepWithTerms(ParamState& p, const StepScalars& s, const WindowSample& sample) {
  const torch::Tensor& w = p.param;
  if (!onCpuContiguous(w) || !onCpuContiguous(p.grad) || !onCpuContiguous(p.m) || !onCpuContiguous(p.v)) {
    // Whole tensors: fp32 copies of the weights before the step and of what fp32 arithmetic intended.
    const torch::Tensor before = w.to(torch::kFloat32, false, /*copy=*/true);
    const torch::Tensor intendedAfter = fp32IntendedWeights(before, p.grad, p.m, p.v, s);
    bf16PlainStep(p, s);
    StepWithTerms out;
    if (sample) out.windowSample = exactDifference(sample(intendedAfter), sample(before));
    out.terms = stepTermsOnePass(before, intendedAfter, w.to(torch::kFloat32));
    return out;
  }
  // The same values a piece at a time: the fp32 reference of each piece
  // before the step (fp32 copies of a piece, not of the tensor), the step
  // on the whole tensor as without statistics, then the sums piece by piece
  // in block order. Held meanwhile: the intended weights in fp32 and the
  // weights before the step in their own dtype (exact in fp32).
  const int64_t n = w.numel();
  const torch::Tensor flatW = w.view({-1}), flatG = p.grad.view({-1}), flatM = p.m.view({-1}), flatV = p.v.view({-1});
  const torch::Tensor before = flatW.clone();
  const torch::Tensor intendedAfter = torch::empty({n}, w.options().dtype(torch::kFloat32));
  const auto copy32 = [](const torch::Tensor& t) { return t.to(torch::kFloat32, false, /*copy=*/true); };
  for (int64_t a = 0; a < n; a += kPiece) {
    const int64_t len = std::min(kPiece, n - a);
    torch::Tensor w32 = intendedAfter.narrow(0, a, len);
    w32.copy_(flatW.narrow(0, a, len));
    torchOptimAdamwInPlace(w32, copy32(flatG.narrow(0, a, len)), copy32(flatM.narrow(0, a, len)),
                           copy32(flatV.narrow(0, a, len)), s);
  }
  bf16PlainStep(p, s);
  StepWithTerms out;
  if (sample) out.windowSample = exactDifference(sample(intendedAfter), sample(before));
  kernels::StepSums sums;
  for (int64_t a = 0; a < n; a += kPiece) {
    const int64_t len = std::min(kPiece, n - a);
    const torch::Tensor before32 = before.narrow(0, a, len).to(torch::kFloat32);
    const torch::Tensor after32 = flatW.narrow(0, a, len).to(torch::kFloat32);
    kernels::addStepSumsCpu(sums, before32.data_ptr<float>(), intendedAfter.data_ptr<float>() + a,
                            after32.data_ptr<float>(), len);
  }
  out.terms = torch::tensor({sums.intendedNonZero, sums.roundedAway, sums.intendedSq, sums.changeSq,
                             static_cast<double>(n)},
                            torch::TensorOptions().dtype(torch::kFloat64));
  return out;
}

}  // namespace plab::steps
