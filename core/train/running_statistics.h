#pragma once
// The optimizer's statistics of a run as they arrive, step by step: each
// statistics step's per-layer figures and totals (rounded away, update
// ratio) and each closed window's (update lost, error, pending) go into the
// step's metrics, and their running means into the run's result.
#include <cstdint>
#include <set>
#include <string>

#include "precision/update_stats.h"
#include "train/step_metrics.h"

namespace plab {

class RunningStatistics {
 public:
  // pendingLayers: the layers whose recipe holds a pending update (Kahan's
  // buffer, mixed's master copy); pending is reported for them only.
  explicit RunningStatistics(std::set<std::string> pendingLayers) : pendingLayers_(std::move(pendingLayers)) {}

  // One optimizer step's statistics into m (statisticsStep: the step
  // measured its per-layer figures; windows arrive when they close).
  void add(int64_t step, bool statisticsStep, const OptimizerStepStats& stats, StepMetrics& m);
  // The means over the run so far.
  void fill(RunResult& r) const;
  // ", rounded away X% (step N), update lost Y%" as far as measured.
  std::string logSuffix() const;

 private:
  std::set<std::string> pendingLayers_;
  double lastRoundedAway_ = 0;  // with the step that measured it
  int64_t lastStatsStep_ = 0;
  double roundedAwaySum_ = 0;
  int64_t roundedAwayCount_ = 0;
  double updateLostSum_ = 0, updateErrorSum_ = 0, updateLostVarianceSum_ = 0, updateNoiseSum_ = 0;
  int64_t windowCount_ = 0;
  double momentErrorSum_[2] = {0, 0};  // quantized moments: m, v
  int64_t momentWindowCount_ = 0;
};

}  // namespace plab
