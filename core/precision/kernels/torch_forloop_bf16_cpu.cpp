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

Variant referenceEndOf(CpuKernel kernel) {
#ifdef PLAB_CPU_KERNEL_X86
  if (kernel == CpuKernel::Avx512) return torchForloopFp32ReferenceEndCpuAvx512;
  if (kernel == CpuKernel::Avx2 && __builtin_cpu_supports("fma")) return torchForloopFp32ReferenceEndCpuAvx2;
#endif
  (void)kernel;
  return torchForloopFp32ReferenceEndCpuBaseline;
}

CpuKernel bestCpuKernel() {
  static const CpuKernel best = availableCpuKernels().back();
  return best;
}

// The window's elements of [begin, end), before the block is stepped.
void copySamples(const TorchForloopBf16Args& a, int64_t begin, int64_t end) {
  const int64_t stride = a.sampleStride;
  for (int64_t i = (begin + stride - 1) / stride * stride; i < end; i += stride) {
    const int64_t j = i / stride;
    a.sampleParam[j] = a.param[i];
    a.sampleGrad[j] = a.grad[i];
    a.sampleM[j] = a.m[i];
    a.sampleV[j] = a.v[i];
  }
}

}  // namespace

void torchForloopBf16Cpu(const TorchForloopBf16Args& a) { torchForloopBf16Cpu(a, bestCpuKernel()); }

void torchForloopFp32ReferenceEndCpu(const TorchForloopBf16Args& a) { torchForloopFp32ReferenceEndCpu(a, bestCpuKernel()); }

void torchForloopFp32ReferenceEndCpu(const TorchForloopBf16Args& a, CpuKernel kernel) {
  const Variant variant = referenceEndOf(kernel);
  forEachCpuBlock(a.n, [&](int64_t begin, int64_t end, size_t) { variant(a, begin, end); });
}

void torchForloopBf16Cpu(const TorchForloopBf16Args& a, CpuKernel kernel) {
  const Variant variant = variantOf(kernel);
  forEachCpuBlock(a.n, [&](int64_t begin, int64_t end, size_t) {
    if (a.sampleStride > 0) copySamples(a, begin, end);
    variant(a, begin, end);
  });
}

}  // namespace plab::kernels
