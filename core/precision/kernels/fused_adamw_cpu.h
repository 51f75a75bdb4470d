#pragma once
// The CPU twin's variants, one per instruction set, and how work is split
// between threads (fused_adamw_cpu.cpp). A variant steps the elements
// [begin, end) and adds their statistics to *sums when sums is not null,
// in a fixed order (lanes of 8, then chunks of 64), so the sums of a block
// do not depend on which thread or variant ran it.
#include <cstdint>
#include <vector>

#include "precision/kernels/fused_adamw.h"

namespace plab::kernels {

constexpr int64_t kCpuBlock = 1 << 14;  // elements per parallel task; a multiple of 64

void fusedAdamWCpuBaseline(const FusedAdamWArgs& a, int64_t begin, int64_t end, StepSums* sums);
#ifdef PLAB_CPU_KERNEL_X86
void fusedAdamWCpuAvx2(const FusedAdamWArgs& a, int64_t begin, int64_t end, StepSums* sums);
void fusedAdamWCpuAvx512(const FusedAdamWArgs& a, int64_t begin, int64_t end, StepSums* sums);
#endif

// The variants by name, so that tests can hold each one to the others.
enum class CpuKernel { Baseline, Avx2, Avx512 };
const char* cpuKernelName(CpuKernel kernel);
// What this build has and this CPU runs, the fastest last (fusedAdamWCpu's choice).
std::vector<CpuKernel> availableCpuKernels();
void fusedAdamWCpu(const FusedAdamWArgs& args, StepSums* sums, CpuKernel kernel);

}  // namespace plab::kernels
