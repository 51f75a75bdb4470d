#include "util/device_memory.h"

#ifdef PLAB_HAVE_CUDA_KERNELS
#include <cuda_runtime.h>
#endif

namespace plab {

uint64_t cudaDeviceMemoryBytes([[maybe_unused]] int index) {
#ifdef PLAB_HAVE_CUDA_KERNELS
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, index) == cudaSuccess) return prop.totalGlobalMem;
#endif
  return 0;
}

}  // namespace plab
