#include "train/torch_runtime.h"

#include <ATen/Version.h>
#include <sched.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <thread>

#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#endif

#include "model/bf16_linear.h"
#include "util/blas_info.h"
#include "util/errors.h"

// MKL's current CNR mode. The public mkl_cbwr_get() is not exported by the
// pip LibTorch, which links MKL statically; this, the service-layer function
// behind it, is. Weak: null with a LibTorch without MKL.
extern "C" int mkl_serv_cbwr_get(int what) __attribute__((weak));
// MKL's mkl_get_dynamic() behind its service layer, exported the same way.
extern "C" int mkl_serv_get_dynamic() __attribute__((weak));

namespace plab {
namespace {

int cpusThisProcessMayUse() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// "BLAS_INFO=mkl" from LibTorch's build settings (a static MKL maps no file of its own).
std::string blasFromBuildSettings() {
  const std::string config = at::show_config();
  const std::string key = "BLAS_INFO=";
  const auto start = config.find(key);
  if (start == std::string::npos) return "";
  const auto from = start + key.size();
  const auto end = config.find_first_of(", \n", from);
  return config.substr(from, end == std::string::npos ? std::string::npos : end - from);
}

// OMP_NUM_THREADS when it is a positive number (PyTorch's and torchrun's
// convention: several processes on one machine each take a share).
int threadsFromEnvironment() {
  const char* env = std::getenv("OMP_NUM_THREADS");
  if (!env) return 0;
  char* end = nullptr;
  const long n = std::strtol(env, &end, 10);
  return end != env && *end == '\0' && n > 0 && n <= 1024 ? static_cast<int>(n) : 0;
}

// mkl_cbwr_get(MKL_CBWR_ALL) as a name: the branch (1 off, 2 AUTO,
// 3 COMPATIBLE, higher an instruction set) and the STRICT flag (0x10000).
std::string mklReproducibilityBranch() {
  if (!mkl_serv_cbwr_get) return "";
  const int mode = mkl_serv_cbwr_get(~0);
  const int branch = mode & 0xffff;
  std::string name = branch == 1   ? "off"
                     : branch == 2 ? "AUTO"
                     : branch == 3 ? "COMPATIBLE"
                                   : "branch " + std::to_string(branch);
  if (mode & 0x10000) name += ",STRICT";
  return name;
}

// "model name" of the first CPU in /proc/cpuinfo ("" where there is none).
std::string cpuModelName() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) break;
    const auto start = line.find_first_not_of(' ', colon + 1);
    return start == std::string::npos ? "" : line.substr(start, 200);
  }
  return "";
}

std::string libcName() {
#if defined(__GLIBC__)
  return std::string("glibc ") + gnu_get_libc_version();
#else
  return "unknown C library";
#endif
}

constexpr const char* kPinnedCapability = "default";  // ATEN_CPU_CAPABILITY
constexpr const char* kPinnedMklBranch = "COMPATIBLE";  // MKL_CBWR

// Every process of the tool asks MKL for run-to-run determinism (see
// torch_runtime.h), before main() and so before MKL's first use, which is
// when MKL reads MKL_CBWR and MKL_DYNAMIC; a value the user set is kept.
[[maybe_unused]] const bool kMklDeterministic = [] {
  return ::setenv("MKL_CBWR", kDeterministicMklBranch, /*overwrite=*/0) == 0 &&
         ::setenv("MKL_DYNAMIC", "FALSE", /*overwrite=*/0) == 0;
}();

}  // namespace

std::string pinReproducibleCpuMath() {
  // Read by ATen and MKL at their first use, not before.
  ::setenv("ATEN_CPU_CAPABILITY", kPinnedCapability, 1);
  ::setenv("MKL_CBWR", kPinnedMklBranch, 1);
  const std::string capability = at::get_cpu_capability();
  const std::string mkl = mklReproducibilityBranch();
  if (capability != "DEFAULT" || (!mkl.empty() && mkl != kPinnedMklBranch))
    throw ConfigError(std::string("reproducible: LibTorch already runs with its ") + capability + " CPU kernels" +
                      (mkl.empty() ? "" : " and MKL branch " + mkl) +
                      " in this process, chosen at its first tensor operation; a reproducible run needs them "
                      "pinned from the start: run it in a process of its own (precision-lab-cli run CONFIG, "
                      "not after other runs), or start the process with ATEN_CPU_CAPABILITY=default "
                      "MKL_CBWR=COMPATIBLE");
  applyIntraOpThreads(1);
  setCpuBf16GemmPath(Bf16GemmPath::Upcast);
  return "reproducible CPU math: 1 intra-op thread, ATen's " + capability + " kernels, " +
         (mkl.empty() ? "BLAS " + blasFromBuildSettings() + " not pinned (its results may differ between CPUs)"
                      : "MKL branch " + mkl) +
         ", bf16 products on fp32 kernels; not pinned: the LibTorch build and " + libcName() +
         "'s libm (expf, tanhf, ...)";
}

int applyIntraOpThreads(int64_t requested) {
  const int fromEnv = threadsFromEnvironment();
  const int threads = requested > 0 ? static_cast<int>(requested) : fromEnv > 0 ? fromEnv : cpusThisProcessMayUse();
  if (at::get_num_threads() != threads) at::set_num_threads(threads);
  return at::get_num_threads();
}

TorchRuntime describeTorchRuntime() {
  TorchRuntime r;
  r.libtorchVersion = TORCH_VERSION;
#ifdef PLAB_HAVE_CUDA_KERNELS
  r.cudaKernelsLinked = true;
#endif
  r.cudaAvailable = torch::cuda::is_available();
  r.intraOpThreads = at::get_num_threads();
  const BlasInfo mapped = loadedBlas();
  const std::string built = blasFromBuildSettings();
  r.blas = mapped.name != "unknown" ? mapped.name + " (" + mapped.library + ")" : built.empty() ? "unknown" : built;
  r.cpuBf16Gemm = describeCpuBf16GemmPath();
  r.cpuCapability = at::get_cpu_capability();
  r.mklReproducibility = mklReproducibilityBranch();
  // Dynamic threading lets MKL pick its thread count per call, outside what CNR repeats.
  if (!r.mklReproducibility.empty() && mkl_serv_get_dynamic && mkl_serv_get_dynamic() != 0)
    r.mklReproducibility += ", dynamic threads";
  r.cpuModel = cpuModelName();
  r.libc = libcName();
  return r;
}

std::string deviceProblem(const std::string& requested) {
  if (requested == "auto" || requested == "cpu") return {};
  if (!torch::cuda::is_available())
    return "device '" + requested +
           "' requested but CUDA is not available (CPU-only LibTorch or no GPU); use \"cpu\" or \"auto\"";
  // RunConfig accepts only "cuda" and "cuda:<digits>".
  const std::string digits = requested == "cuda" ? "0" : requested.substr(5);
  if (digits.size() > 4 || std::stoi(digits) >= static_cast<int>(torch::cuda::device_count()))
    return "device '" + requested + "' does not exist (" + std::to_string(torch::cuda::device_count()) +
           " CUDA device(s))";
  return {};
}

}  // namespace plab
