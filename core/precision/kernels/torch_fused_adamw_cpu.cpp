// Splits torch_fused_adamw.h's step into fixed blocks on torch's threads with
// the variant for this CPU, and adds the blocks' statistics in block order.
#include "precision/kernels/torch_fused_adamw_cpu.h"

#include "precision/kernels/cpu_blocks.h"

namespace plab::kernels {
namespace {

using Variant = void (*)(const TorchFusedAdamWArgs&, int64_t, int64_t, StepSums*);

Variant variantOf(CpuKernel kernel) {
#ifdef PLAB_CPU_KERNEL_X86
  if (kernel == CpuKernel::Avx512) return torchFusedAdamWCpuAvx512;
  // The AVX2 variant is built with -mfma: on the rare AVX2 CPU without FMA
  // the baseline runs (same bits).
  if (kernel == CpuKernel::Avx2 && __builtin_cpu_supports("fma")) return torchFusedAdamWCpuAvx2;
#endif
  (void)kernel;
  return torchFusedAdamWCpuBaseline;
}

}  // namespace

void torchFusedAdamWCpu(const TorchFusedAdamWArgs& a, StepSums* sums) {
  static const CpuKernel best = availableCpuKernels().back();
  torchFusedAdamWCpu(a, sums, best);
}

void torchFusedAdamWCpu(const TorchFusedAdamWArgs& a, StepSums* sums, CpuKernel kernel) {
  runCpuVariant(variantOf(kernel), a, sums);
}

}  // namespace plab::kernels
