// The CPU twin's ranges for any CPU.
#define PLAB_QUANTIZE_VARIANT Baseline
#include "formats/quantize_cpu_loop.h"
