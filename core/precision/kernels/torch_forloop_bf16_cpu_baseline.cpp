// torch.optim.AdamW's for-loop step on bf16 tensors for any CPU (fmaf from
// the C library where the CPU has no fused multiply-add instruction: slow, exact).
#define PLAB_TORCH_FORLOOP_KERNEL torchForloopBf16CpuBaseline
#define PLAB_TORCH_FORLOOP_REFERENCE_END torchForloopFp32ReferenceEndCpuBaseline
#include "precision/kernels/torch_forloop_bf16_cpu_loop.h"
