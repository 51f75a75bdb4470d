#include "train/lr_schedule.h"

#include <algorithm>
#include <cmath>

namespace plab {

double scheduledLr(const RunConfig& c, int64_t step) {
  const double peak = c.adamw.lr;
  const int64_t warmup = std::min(c.warmup_steps, c.steps);
  if (warmup > 0 && step <= warmup) return peak * static_cast<double>(step) / static_cast<double>(warmup);
  if (c.lr_schedule != "cosine") return peak;
  const int64_t decaySteps = c.steps - warmup;
  if (decaySteps <= 0) return peak;
  // Progress 0 on the first step after warmup, 1 on the last step.
  const double progress =
      decaySteps == 1 ? 1.0 : std::clamp(static_cast<double>(step - warmup - 1) / (decaySteps - 1), 0.0, 1.0);
  const double floor = c.min_lr_ratio * peak;
  return floor + (peak - floor) * 0.5 * (1.0 + std::cos(M_PI * progress));
}

}  // namespace plab
