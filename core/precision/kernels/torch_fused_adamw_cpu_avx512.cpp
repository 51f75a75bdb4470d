// torch.optim.AdamW(fused=True)'s step for x86-64 CPUs with AVX-512 F/BW/VL
// (512-bit vectors preferred).
#define PLAB_TORCH_FUSED_KERNEL torchFusedAdamWCpuAvx512
#include "precision/kernels/torch_fused_adamw_cpu_loop.h"
