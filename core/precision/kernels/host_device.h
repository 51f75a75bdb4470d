#pragma once
// Marks the kernel math that runs both in the CPU loops and in CUDA kernels:
// one definition, compiled by the host compiler and by nvcc, is what makes
// the CPU and CUDA twins round identically.
//
// On the host the functions have internal linkage (static): the CPU twin is
// compiled once per instruction set (fused_adamw_cpu_*.cpp), and a shared
// inline definition could let the linker hand the AVX2 copy to the baseline
// code.
#if defined(__CUDACC__)
#define PLAB_HD __host__ __device__ __forceinline__
#else
#define PLAB_HD static inline
#endif
