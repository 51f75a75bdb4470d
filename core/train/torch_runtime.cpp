#include "train/torch_runtime.h"

#include <sched.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "model/bf16_linear.h"
#include "util/blas_info.h"

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

}  // namespace

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
  return r;
}

}  // namespace plab
