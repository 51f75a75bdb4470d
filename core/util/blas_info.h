#pragma once
// Which BLAS library the process mapped (LibTorch's fp32 matrix products go
// through it on CPU). A reference libblas3 is about 28x slower than an
// optimised BLAS for a GPT-2 forward; runs warn when it is the one loaded.
// The torch package links MKL statically and maps no BLAS file: there
// train/torch_runtime.h reads LibTorch's own BLAS_INFO instead.
#include <string>

namespace plab {

struct BlasInfo {
  std::string name;     // "OpenBLAS", "reference BLAS", "MKL", "BLIS", "unknown"
  std::string library;  // the mapped file, e.g. /usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblasp-r0.3.21.so
  bool slow = false;    // the unoptimised reference implementation
};

// Reads /proc/self/maps (Linux); "unknown" elsewhere or when none is mapped.
BlasInfo loadedBlas();

}  // namespace plab
