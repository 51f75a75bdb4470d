#pragma once
// The variants of torch_fused_adamw.h's CPU loop, one per instruction set
// (all compute the same bits), and the entry point that splits the work.
#include <cstdint>

#include "precision/kernels/fused_adamw_cpu.h"
#include "precision/kernels/torch_fused_adamw.h"

namespace plab::kernels {

void torchFusedAdamWCpuBaseline(const TorchFusedAdamWArgs& a, int64_t begin, int64_t end, StepSums* sums);
#ifdef PLAB_CPU_KERNEL_X86
void torchFusedAdamWCpuAvx2(const TorchFusedAdamWArgs& a, int64_t begin, int64_t end, StepSums* sums);
void torchFusedAdamWCpuAvx512(const TorchFusedAdamWArgs& a, int64_t begin, int64_t end, StepSums* sums);
#endif

// With a chosen variant (CpuKernel::Avx2 here also needs FMA), for tests.
void torchFusedAdamWCpu(const TorchFusedAdamWArgs& a, StepSums* sums, CpuKernel kernel);

}  // namespace plab::kernels
