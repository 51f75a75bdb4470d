// torch.optim.AdamW's for-loop step on bf16 tensors for x86-64 CPUs with AVX2 and FMA.
#define PLAB_TORCH_FORLOOP_KERNEL torchForloopBf16CpuAvx2
#define PLAB_TORCH_FORLOOP_REFERENCE_END torchForloopFp32ReferenceEndCpuAvx2
#include "precision/kernels/torch_forloop_bf16_cpu_loop.h"
