// torch.optim.AdamW(fused=True)'s step for x86-64 CPUs with AVX2 and FMA.
#define PLAB_TORCH_FUSED_KERNEL torchFusedAdamWCpuAvx2
#include "precision/kernels/torch_fused_adamw_cpu_loop.h"
