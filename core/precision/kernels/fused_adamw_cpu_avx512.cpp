// The CPU twin for x86-64 CPUs with AVX-512 F/BW/VL (compiled for them, 512-bit
// vectors preferred, no FMA contraction): 16 lanes, and the moments' two
// Philox streams in one pass.
#define PLAB_CPU_KERNEL fusedAdamWCpuAvx512
#include "precision/kernels/fused_adamw_cpu_loop.h"
