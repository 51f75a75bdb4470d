#pragma once
// The memory of a CUDA device, read without allocating on it. Torch-free.
#include <cstdint>

namespace plab {

// Total memory of CUDA device `index` in bytes; 0 when unknown (a build
// without the CUDA kernels, or no such device).
uint64_t cudaDeviceMemoryBytes(int index);

}  // namespace plab
