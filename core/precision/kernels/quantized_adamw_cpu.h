#pragma once
// The quantized-moment step's CPU variants, one per instruction set
// (quantized_adamw_cpu_loop.h), and the entry point that names one, so
// that tests can hold each to the others. A variant steps the elements
// [begin, end) (begin a multiple of the block) and adds the statistics and
// moment errors, when not null, in element order. CpuKernel and
// availableCpuKernels() are the fused step's (fused_adamw_cpu.h): the same
// instruction sets, the same run-time choice.
#include <cstdint>

#include "precision/kernels/fused_adamw_cpu.h"
#include "precision/kernels/quantized_adamw.h"

namespace plab::kernels {

void quantizedAdamWCpuBaseline(const QuantizedAdamWArgs& a, int64_t begin, int64_t end, StepSums* sums,
                               MomentErrorSums* errors);
#ifdef PLAB_CPU_KERNEL_X86
void quantizedAdamWCpuAvx2(const QuantizedAdamWArgs& a, int64_t begin, int64_t end, StepSums* sums,
                           MomentErrorSums* errors);
void quantizedAdamWCpuAvx512(const QuantizedAdamWArgs& a, int64_t begin, int64_t end, StepSums* sums,
                             MomentErrorSums* errors);
#endif

void quantizedAdamWCpu(const QuantizedAdamWArgs& args, StepSums* sums, MomentErrorSums* momentErrors,
                       CpuKernel kernel);

}  // namespace plab::kernels
