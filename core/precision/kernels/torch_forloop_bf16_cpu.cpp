// Splits torch_forloop_bf16.h's step into fixed blocks on torch's threads
// with the variant for this CPU.
#include "precision/kernels/torch_forloop_bf16_cpu.h"

#include "precision/kernels/cpu_blocks.h"

namespace plab::kernels {
namespace {

using Variant = void (*)(const TorchForloopBf16Args&, int64_t, int64_t);

Variant variantOf(CpuKernel kernel) {
#ifdef PLAB_CPU_KERNEL_X86
  if (kernel == CpuKernel::Avx512) return torchForloopBf16CpuAvx512;
  // The AVX2 variant is built with -mfma: on the rare AVX2 CPU without FMA
  // the baseline runs (same bits).
  if (kernel == CpuKernel::Avx2 && __builtin_cpu_supports("fma")) return torchForloopBf16CpuAvx2;
#endif
  (void)kernel;
  return torchForloopBf16CpuBaseline;
}

}  // namespace

void torchForloopBf16Cpu(const TorchForloopBf16Args& a) {
  static const CpuKernel best = availableCpuKernels().back();
  torchForloopBf16Cpu(a, best);
}

void torchForloopBf16Cpu(const TorchForloopBf16Args& a, CpuKernel kernel) {
  const Variant variant = variantOf(kernel);
  forEachCpuBlock(a.n, [&](int64_t begin, int64_t end, size_t) { variant(a, begin, end); });
}

}  // namespace plab::kernels
