// The CPU twin's entry point: splits the elements into fixed blocks, runs
// them on torch's thread pool with the variant for this CPU, and adds the
// blocks' statistics in block order. All variants compute the same bits
// (same operations, no contraction); AVX2 only runs wider.
#include "precision/kernels/fused_adamw_cpu.h"

#include <vector>

#include "precision/kernels/cpu_blocks.h"

namespace plab::kernels {
namespace {

using Variant = void (*)(const FusedAdamWArgs&, int64_t, int64_t, StepSums*);

Variant variantOf(CpuKernel kernel) {
#ifdef PLAB_CPU_KERNEL_X86
  if (kernel == CpuKernel::Avx512) return fusedAdamWCpuAvx512;
  if (kernel == CpuKernel::Avx2) return fusedAdamWCpuAvx2;
#endif
  (void)kernel;
  return fusedAdamWCpuBaseline;
}

}  // namespace

const char* cpuKernelName(CpuKernel kernel) {
  switch (kernel) {
    case CpuKernel::Baseline: return "baseline";
    case CpuKernel::Avx2: return "avx2";
    case CpuKernel::Avx512: return "avx512";
  }
  return "?";
}

std::vector<CpuKernel> availableCpuKernels() {
  std::vector<CpuKernel> out = {CpuKernel::Baseline};
#ifdef PLAB_CPU_KERNEL_X86
  if (__builtin_cpu_supports("avx2")) out.push_back(CpuKernel::Avx2);
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
    out.push_back(CpuKernel::Avx512);
#endif
  return out;
}

void fusedAdamWCpu(const FusedAdamWArgs& a, StepSums* sums) {
  static const CpuKernel best = availableCpuKernels().back();
  fusedAdamWCpu(a, sums, best);
}

void fusedAdamWCpu(const FusedAdamWArgs& a, StepSums* sums, CpuKernel kernel) {
  runCpuVariant(variantOf(kernel), a, sums);
}

}  // namespace plab::kernels
