#pragma once
// The step statistics of a weight tensor from fp32 copies taken before the
// step, of the weights fp32 arithmetic intended, and after the step, in one
// pass on the CPU: intended = intendedAfter - before and change = after -
// before in fp64 (exact); an element is rounded away when its intended
// update is non-zero and the step left it unchanged. For fp32 weights the
// intended update is the change itself (precision/steps/adamw_step.h):
// intendedAfter is after. Same block split and lane order as the fused
// kernels, so the sums do not depend on the threads. Torch-free except for
// the thread pool.
#include <cstdint>

#include "precision/kernels/fused_adamw.h"

namespace plab::kernels {

StepSums stepSumsCpu(const float* before, const float* intendedAfter, const float* after, int64_t n);

// Adds the block sums of n elements to `sums`, in block order: over
// consecutive pieces of a tensor whose lengths are multiples of kCpuBlock
// (the last any), starting from StepSums{}, it gives stepSumsCpu's bits on
// the whole (no fp32 copy of the whole tensor needed).
void addStepSumsCpu(StepSums& sums, const float* before, const float* intendedAfter, const float* after, int64_t n);

}  // namespace plab::kernels
