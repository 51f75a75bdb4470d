#pragma once
// Peak memory of one piece of work (a training step) above what was resident
// when it began: what its activations, gradients and temporaries really
// take, beside the predicted bytes of the training state.
//   CPU: the process's peak RSS (VmHWM) minus its RSS at the start, after
//        malloc_trim (freed memory must be faulted in again to count) and a
//        reset of the high-water mark (/proc/self/clear_refs).
//   CUDA: the caching allocator's peak of allocated bytes minus its
//        allocated bytes at the start (builds with CUDA kernels only).
#include <cstdint>
#include <optional>
#include <string>

namespace plab {

class StepMemoryProbe {
 public:
  // device: "cpu" or "cuda[:N]". Starts measuring.
  explicit StepMemoryProbe(const std::string& device);
  // The peak above the start so far; nullopt where it cannot be measured
  // (no /proc, or CUDA without the allocator's statistics in this build).
  std::optional<int64_t> peakAboveStart() const;
  // What was resident when measuring began (CPU: the process's RSS after
  // malloc_trim; CUDA: the allocator's allocated bytes); nullopt as above.
  std::optional<int64_t> startBytes() const { return start_; }

 private:
  bool cuda_ = false;
  [[maybe_unused]] int index_ = 0;  // the CUDA device; read only in CUDA builds
  std::optional<int64_t> start_;  // the measure peakAboveStart() counts from
};

}  // namespace plab
