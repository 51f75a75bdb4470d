// The CPU twin's ranges for x86-64 with AVX2 (compiled with -mavx2; only on x86-64).
#define PLAB_QUANTIZE_VARIANT Avx2
#define PLAB_QUANTIZE_X86 1
#include "formats/quantize_cpu_loop.h"
