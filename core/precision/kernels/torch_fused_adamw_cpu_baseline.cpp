// torch.optim.AdamW(fused=True)'s step for any CPU (fmaf from the C library
// where the CPU has no fused multiply-add instruction: slow, exact).
#define PLAB_TORCH_FUSED_KERNEL torchFusedAdamWCpuBaseline
#include "precision/kernels/torch_fused_adamw_cpu_loop.h"
