// The quantized-moment step for any x86-64 (SSE2) or other CPU.
#define PLAB_QUANTIZED_KERNEL quantizedAdamWCpuBaseline
#include "precision/kernels/quantized_adamw_cpu_loop.h"
