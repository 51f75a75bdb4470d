#include "train/run_peak.h"

#include <algorithm>

#include "util/step_memory.h"

namespace plab {
namespace {

// The first multiple of `every` above `after`.
int64_t nextMultiple(int64_t after, int64_t every) { return (after / every + 1) * every; }

}  // namespace

RunPeak::RunPeak(int64_t firstStep, int64_t lastStep, int64_t statsEvery, int64_t window) {
  if (lastStep < firstStep) return;
  const int64_t second = std::min(firstStep + 1, lastStep);
  planned_.push_back(second);
  if (statsEvery > 0) planned_.push_back(nextMultiple(firstStep, statsEvery));
  if (window > 0) planned_.push_back(nextMultiple(firstStep, window));
  planned_.erase(std::remove_if(planned_.begin(), planned_.end(), [&](int64_t s) { return s > lastStep; }),
                 planned_.end());
  std::sort(planned_.begin(), planned_.end());
  planned_.erase(std::unique(planned_.begin(), planned_.end()), planned_.end());
}

bool RunPeak::probes(int64_t step) const { return std::binary_search(planned_.begin(), planned_.end(), step); }

std::optional<RunPeak::Probed> RunPeak::add(int64_t step, const StepMemoryProbe& probe, int64_t stateBytesAtStart) {
  const std::optional<int64_t> above = probe.peakAboveStart();
  if (!above) return std::nullopt;
  Probed p;
  p.aboveStart = *above;
  probed_.push_back(step);
  stepPeak_ = std::max(stepPeak_.value_or(0), *above);
  p.training = stateBytesAtStart + *above;
  trainingPeak_ = std::max(trainingPeak_.value_or(0), p.training);
  p.process = probe.startBytes().value_or(0) + *above;
  processPeak_ = std::max(processPeak_.value_or(0), p.process);
  return p;
}

}  // namespace plab
