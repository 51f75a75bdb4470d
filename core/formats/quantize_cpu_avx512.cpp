// The CPU twin's ranges for x86-64 with AVX-512 F/BW/VL (compiled with
// -mavx512f -mavx512bw -mavx512vl, 512-bit vectors: 16 lanes, one NVFP4
// block; only on x86-64).
#define PLAB_QUANTIZE_VARIANT Avx512
#define PLAB_QUANTIZE_X86 1
#include "formats/quantize_cpu_loop.h"
