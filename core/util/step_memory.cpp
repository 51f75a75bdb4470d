#include "util/step_memory.h"

#include <malloc.h>

#include <cstdlib>
#include <fstream>

#ifdef PLAB_HAVE_CUDA_KERNELS
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#endif

namespace plab {
namespace {

std::optional<int64_t> statusBytes(const std::string& key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key + ":", 0) == 0) return std::atoll(line.c_str() + key.size() + 1) * 1024;  // kB
  return std::nullopt;
}

}  // namespace

StepMemoryProbe::StepMemoryProbe(const std::string& device) {
  cuda_ = device.rfind("cuda", 0) == 0;
  if (cuda_) {
#ifdef PLAB_HAVE_CUDA_KERNELS
    index_ = device.size() > 5 ? std::atoi(device.c_str() + 5) : c10::cuda::current_device();
    c10::cuda::device_synchronize();
    namespace alloc = c10::cuda::CUDACachingAllocator;
    alloc::resetPeakStats(index_);
    start_ = alloc::getDeviceStats(index_).allocated_bytes[0].current;  // stat 0: all pools
#endif
    return;
  }
  malloc_trim(0);
  std::ofstream reset("/proc/self/clear_refs");
  reset << "5";  // resets VmHWM to the current RSS
  reset.close();
  if (reset.fail()) return;
  start_ = statusBytes("VmRSS");
}

std::optional<int64_t> StepMemoryProbe::peakAboveStart() const {
  if (!start_) return std::nullopt;
  std::optional<int64_t> peak;
  if (cuda_) {
#ifdef PLAB_HAVE_CUDA_KERNELS
    c10::cuda::device_synchronize();
    peak = c10::cuda::CUDACachingAllocator::getDeviceStats(index_).allocated_bytes[0].peak;
#endif
  } else {
    peak = statusBytes("VmHWM");
  }
  if (!peak) return std::nullopt;
  return *peak > *start_ ? *peak - *start_ : 0;
}

}  // namespace plab
