#pragma once
// The variants of torch_forloop_bf16.h's CPU loop, one per instruction set
// (all compute the same bits), and the entry point that splits the work.
#include <cstdint>

#include "precision/kernels/fused_adamw_cpu.h"
#include "precision/kernels/torch_forloop_bf16.h"

namespace plab::kernels {

void torchForloopBf16CpuBaseline(const TorchForloopBf16Args& a, int64_t begin, int64_t end);
void torchForloopFp32ReferenceEndCpuBaseline(const TorchForloopBf16Args& a, int64_t begin, int64_t end);
#ifdef PLAB_CPU_KERNEL_X86
void torchForloopBf16CpuAvx2(const TorchForloopBf16Args& a, int64_t begin, int64_t end);
void torchForloopBf16CpuAvx512(const TorchForloopBf16Args& a, int64_t begin, int64_t end);
void torchForloopFp32ReferenceEndCpuAvx2(const TorchForloopBf16Args& a, int64_t begin, int64_t end);
void torchForloopFp32ReferenceEndCpuAvx512(const TorchForloopBf16Args& a, int64_t begin, int64_t end);
#endif

// With a chosen variant (CpuKernel::Avx2 here also needs FMA), for tests.
void torchForloopBf16Cpu(const TorchForloopBf16Args& a, CpuKernel kernel);
void torchForloopFp32ReferenceEndCpu(const TorchForloopBf16Args& a, CpuKernel kernel);

}  // namespace plab::kernels
