#pragma once
// Which BLAS library the process really loaded (LibTorch's fp32 matrix
// products go through it on CPU). Debian's reference libblas3 is about 28x
// slower than OpenBLAS for a GPT-2 forward, which would make every fp32
// figure wrong; the setup installs OpenBLAS and runs record which one ran.
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
