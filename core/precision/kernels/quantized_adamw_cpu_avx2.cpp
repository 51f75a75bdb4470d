// The quantized-moment step for x86-64 CPUs with AVX2 (compiled with -mavx2,
// no FMA contraction): 8 lanes, gathers for the code tables.
#define PLAB_QUANTIZED_KERNEL quantizedAdamWCpuAvx2
#include "precision/kernels/quantized_adamw_cpu_loop.h"
