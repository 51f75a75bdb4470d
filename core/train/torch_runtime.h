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
  std::string cpuCapability;    // ATen's CPU kernel variant: "DEFAULT", "AVX2", "AVX512"
  std::string mklReproducibility;  // MKL's CNR branch ("off", "AUTO", "COMPATIBLE"..., then
                                   // ", dynamic threads" where on); "" without MKL
  std::string cpuModel;            // /proc/cpuinfo's "model name"; "" where there is none
  std::string libc;                // "glibc 2.36"
};

TorchRuntime describeTorchRuntime();

// Why a run config's "device" cannot run in this process ("" when it can):
// "cuda" without CUDA, "cuda:3" with two GPUs. Checked before Start (app)
// and before the first run (CLI) rather than when the run begins.
std::string deviceProblem(const std::string& requested);

// MKL without a conditional-numerical-reproducibility branch may reduce in
// an order that varies from run to run on some CPUs with several threads
// (Intel documents it: "AUTO ... ensuring fixed cache sizes, deterministic
// reductions, and static scheduling"; on Intel CPUs multithreaded products
// have differed between identical runs). So every process that links this
// file starts with MKL_CBWR=AUTO unless the environment already sets it: MKL
// keeps its fastest code path for the CPU and the thread count, and repeats
// its results bit for bit. On the AMD EPYC these figures come from it
// changed no bit (the same forward logits, the same trained weights) because
// MKL ran deterministically there already. CNR holds only for a fixed thread
// count ("set MKL_DYNAMIC and OMP_DYNAMIC to FALSE", Intel's reproducibility
// conditions), and MKL's dynamic threading stays on in a process that never
// calls at::set_num_threads (which turns it off): the reference probe, or a
// run whose thread count is already LibTorch's default. So MKL_DYNAMIC=FALSE
// is set the same way. describeTorchRuntime reports the branch in effect
// ("AUTO", or "off" where MKL read its setting first), with ", dynamic
// threads" while MKL may still change its thread count.
inline constexpr const char* kDeterministicMklBranch = "AUTO";

// Sets LibTorch's intra-op thread count: `requested`; with 0 OMP_NUM_THREADS
// when set, else one thread per CPU this process may run on (its affinity
// mask). Returns the count set.
int applyIntraOpThreads(int64_t requested);

// A run's "reproducible": true. The fp32 weights a CPU run trains depend on
// the intra-op thread count, on ATen's CPU kernel variant (default, AVX2 or
// AVX-512: vector width and fused multiply-adds) and on MKL's code path
// (measured in resources/models/tiny-gpt2/README.md). This pins all three to
// what every x86-64 CPU runs identically: one thread, ATen's portable
// "default" kernels and MKL's conditional numerical reproducibility branch
// COMPATIBLE; bf16 matrix products take the fp32 (upcast) path. About half
// the speed of the free choice (the tiny GPT-2's pretraining).
// ATen and MKL read their setting once, at their first use, so this must come
// before the process's first CPU tensor operation; it throws ConfigError,
// saying so, when LibTorch already runs otherwise in this process. A second
// call, with the settings in effect, passes. Returns a line for the run log.
std::string pinReproducibleCpuMath();

}  // namespace plab
