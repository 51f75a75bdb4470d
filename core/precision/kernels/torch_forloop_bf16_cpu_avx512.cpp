// torch.optim.AdamW's for-loop step on bf16 tensors for x86-64 CPUs with
// AVX-512 F/BW/VL (512-bit vectors preferred).
#define PLAB_TORCH_FORLOOP_KERNEL torchForloopBf16CpuAvx512
#define PLAB_TORCH_FORLOOP_REFERENCE_END torchForloopFp32ReferenceEndCpuAvx512
#include "precision/kernels/torch_forloop_bf16_cpu_loop.h"
