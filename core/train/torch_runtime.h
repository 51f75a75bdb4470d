#pragma once
// What this process trains with: the LibTorch it was built against, whether
// the CUDA optimizer kernels are linked, the intra-op thread count, the BLAS
// and the CPU's bf16 matrix-product path. Recorded in run_info.json and
// printed by `precision-lab-cli --version` and `bench`.
#include <cstdint>
#include <string>

namespace plab {

struct TorchRuntime {
  std::string libtorchVersion;  // "2.13.0"
  bool cudaKernelsLinked = false;
  bool cudaAvailable = false;
  int intraOpThreads = 0;
  std::string blas;             // "mkl", "open", ... (LibTorch's BLAS_INFO) or the mapped library
  std::string cpuBf16Gemm;      // see model/bf16_linear.h
};

TorchRuntime describeTorchRuntime();

// Sets LibTorch's intra-op thread count: `requested`; with 0 OMP_NUM_THREADS
// when set, else one thread per CPU this process may run on (its affinity
// mask). Returns the count set.
int applyIntraOpThreads(int64_t requested);

}  // namespace plab
