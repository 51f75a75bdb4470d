// Splits torch_fused_adamw.h's step into fixed blocks on torch's threads with
// the variant for this CPU, and adds the blocks' statistics in block order.
#include "precision/kernels/torch_fused_adamw_cpu.h"

#include <algorithm>
#include <vector>

#include "util/parallel_chunks.h"

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
  const Variant variant = variantOf(kernel);
  const int64_t blocks = (a.n + kCpuBlock - 1) / kCpuBlock;
  std::vector<StepSums> partial(sums ? static_cast<size_t>(blocks) : 0);
  parallelChunks(blocks, 1, [&](int64_t first, int64_t last) {
    for (int64_t b = first; b < last; ++b)
      variant(a, b * kCpuBlock, std::min(a.n, (b + 1) * kCpuBlock), sums ? &partial[static_cast<size_t>(b)] : nullptr);
  });
  if (!sums) return;
  for (const StepSums& p : partial) sums->add(p);
}

}  // namespace plab::kernels
