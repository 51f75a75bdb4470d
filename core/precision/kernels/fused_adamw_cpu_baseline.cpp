// The CPU twin for any x86-64 (SSE2) or other CPU.
#define PLAB_CPU_KERNEL fusedAdamWCpuBaseline
#include "precision/kernels/fused_adamw_cpu_loop.h"
