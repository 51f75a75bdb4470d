// The CPU twin for x86-64 CPUs with AVX2 (compiled with -mavx2, no FMA
// contraction): 8 lanes and native packs and blends for the bf16 bits.
#define PLAB_CPU_KERNEL fusedAdamWCpuAvx2
#include "precision/kernels/fused_adamw_cpu_loop.h"
