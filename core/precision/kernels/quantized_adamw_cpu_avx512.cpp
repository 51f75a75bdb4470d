// The quantized-moment step for x86-64 CPUs with AVX-512 F/BW/VL (512-bit
// vectors preferred, no FMA contraction): 16 lanes, the 4-bit table in one
// register, 16 Philox groups in one pass.
#define PLAB_QUANTIZED_KERNEL quantizedAdamWCpuAvx512
#include "precision/kernels/quantized_adamw_cpu_loop.h"
