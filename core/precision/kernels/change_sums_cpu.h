#pragma once
// The step statistics of an fp32 weight tensor from copies taken before and
// after its step, in one pass on the CPU. For fp32 weights the intended
// update is the change itself (precision/steps/adamw_step.h), so
// intended = change = after - before in fp64 (exact), and an element is
// rounded away only if it has a non-zero intended update that left it
// unchanged (never, for fp32; counted all the same). Same block split and
// lane order as the fused kernels: the sums do not depend on the threads.
// Torch-free except for the thread pool.
#include <cstdint>

#include "precision/kernels/fused_adamw.h"

namespace plab::kernels {

StepSums fp32ChangeSumsCpu(const float* before, const float* after, int64_t n);

}  // namespace plab::kernels
