#pragma once
// A run's measured memory peak, taken on a few representative steps rather
// than every step (each probe's malloc_trim would cost throughput): the
// second step this process runs (the first warms up the allocator), or the
// only one; the first statistics step after it (layer statistics run on
// step 1 and every `layer_stats_every` steps); and the first step after it
// that closes an update-lost window (every `update_window` steps). The
// largest of each figure is kept.
#include <cstdint>
#include <optional>
#include <vector>

namespace plab {

class StepMemoryProbe;

class RunPeak {
 public:
  // firstStep: the first step this process runs (> 1 when resumed);
  // lastStep: the run's last step; window 0: no update-lost window.
  RunPeak(int64_t firstStep, int64_t lastStep, int64_t statsEvery, int64_t window);

  // The steps to probe, in increasing order, without repeats.
  const std::vector<int64_t>& plannedSteps() const { return planned_; }
  bool probes(int64_t step) const;

  // After a probed step: its probe, and the bytes of weights, gradients and
  // optimizer state the run held when the step began (tensor storage: exact,
  // and blind to what other runs or LibTorch's first use of a kernel left in
  // the process). The training peak is that plus the step's measured peak
  // above its start. Returns what it measured (for the log); nothing where
  // the probe could not measure.
  struct Probed {
    int64_t aboveStart = 0;
    int64_t training = 0;  // held for training at the step's peak
    int64_t process = 0;   // resident in the whole process at the step's peak
  };
  std::optional<Probed> add(int64_t step, const StepMemoryProbe& probe, int64_t stateBytesAtStart);

  const std::vector<int64_t>& probedSteps() const { return probed_; }
  std::optional<int64_t> stepPeakBytes() const { return stepPeak_; }
  std::optional<int64_t> trainingPeakBytes() const { return trainingPeak_; }
  // The probe's start (the process's RSS; CUDA: allocated bytes) plus the
  // step's peak above it: all the process held, the runtime and whatever
  // else it runs included.
  std::optional<int64_t> processPeakBytes() const { return processPeak_; }

 private:
  std::vector<int64_t> planned_, probed_;
  std::optional<int64_t> stepPeak_, trainingPeak_, processPeak_;
};

}  // namespace plab
