#pragma once
// Marks the kernel math that runs both in the CPU loops and in CUDA kernels:
// one definition, compiled by the host compiler and by nvcc, is what makes
// the CPU and CUDA twins round identically.
#if defined(__CUDACC__)
#define PLAB_HD __host__ __device__ __forceinline__
#else
#define PLAB_HD inline
#endif
