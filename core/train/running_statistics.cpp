#include "train/running_statistics.h"

#include <cmath>
#include <iomanip>
#include <sstream>

namespace plab {
namespace {

LayerStepMetrics layerMetrics(const LayerUpdateStats& s) {
  LayerStepMetrics l;
  l.layer = s.layer;
  l.roundedAwayFraction = s.intendedNonZero > 0 ? double(s.roundedAway) / double(s.intendedNonZero) : 0.0;
  l.updateRatio = s.intendedNormSq > 0 ? std::sqrt(s.effectiveNormSq / s.intendedNormSq) : 1.0;
  return l;
}

// Pending is reported where something holds it (Kahan's buffer, mixed's
// master copy), else left out.
LayerWindowMetrics windowMetrics(const LayerWindowStats& s, bool holdsPending) {
  LayerWindowMetrics w;
  w.layer = s.layer;
  w.updateLost = s.updateLost();
  w.updateError = s.updateError();
  w.updateLostStdError = s.updateLostStdError();
  if (holdsPending) w.updatePending = s.updatePending();
  w.elements = s.trackedElements;
  w.updateNoise = s.updateNoise();
  w.momentErrorM = s.momentError(0);
  w.momentErrorV = s.momentError(1);
  return w;
}

std::string percent3(double fraction) {
  std::ostringstream s;
  s << std::setprecision(3) << 100 * fraction << "%";
  return s.str();
}

}  // namespace

void RunningStatistics::add(int64_t step, bool statisticsStep, const OptimizerStepStats& stats, StepMetrics& m) {
  if (statisticsStep) {
    for (const LayerUpdateStats& s : stats.layers) m.layers.push_back(layerMetrics(s));
    const LayerStepMetrics total = layerMetrics(totalOf(stats.layers));
    // Only measuring steps carry the totals; the others leave them unset.
    m.roundedAwayFraction = total.roundedAwayFraction;
    m.updateRatio = total.updateRatio;
    lastRoundedAway_ = total.roundedAwayFraction;
    lastStatsStep_ = step;
    roundedAwaySum_ += lastRoundedAway_;
    ++roundedAwayCount_;
  }
  if (!stats.window.empty()) {
    for (const LayerWindowStats& w : stats.window)
      m.windowLayers.push_back(windowMetrics(w, pendingLayers_.count(w.layer) > 0));
    const LayerWindowMetrics total = windowMetrics(totalOf(stats.window), !pendingLayers_.empty());
    m.updateLost = total.updateLost;
    m.updateError = total.updateError;
    m.updateLostStdError = total.updateLostStdError;
    m.updatePending = total.updatePending;
    m.updateNoise = total.updateNoise;
    m.momentErrorM = total.momentErrorM;
    m.momentErrorV = total.momentErrorV;
    if (m.momentErrorM && m.momentErrorV) {
      momentErrorSum_[0] += *m.momentErrorM;
      momentErrorSum_[1] += *m.momentErrorV;
      ++momentWindowCount_;
    }
    updateNoiseSum_ += *m.updateNoise;
    updateLostSum_ += *m.updateLost;
    updateErrorSum_ += *m.updateError;
    updateLostVarianceSum_ += *m.updateLostStdError * *m.updateLostStdError;
    ++windowCount_;
  }
}

void RunningStatistics::fill(RunResult& r) const {
  r.meanRoundedAwayFraction = roundedAwayCount_ > 0 ? roundedAwaySum_ / double(roundedAwayCount_) : 0.0;
  if (windowCount_ > 0) {
    r.meanUpdateLost = updateLostSum_ / double(windowCount_);
    r.meanUpdateError = updateErrorSum_ / double(windowCount_);
    r.meanUpdateNoise = updateNoiseSum_ / double(windowCount_);
    // Windows are taken as independent: the mean's se is sqrt(sum se^2) / n.
    r.meanUpdateLostStdError = std::sqrt(updateLostVarianceSum_) / double(windowCount_);
  }
  if (momentWindowCount_ > 0) {
    r.meanMomentErrorM = momentErrorSum_[0] / double(momentWindowCount_);
    r.meanMomentErrorV = momentErrorSum_[1] / double(momentWindowCount_);
  }
}

std::string RunningStatistics::logSuffix() const {
  std::string out;
  if (lastStatsStep_ > 0)
    out += ", rounded away " + percent3(lastRoundedAway_) + " (step " + std::to_string(lastStatsStep_) + ")";
  if (windowCount_ > 0) out += ", update lost " + percent3(updateLostSum_ / double(windowCount_));
  return out;
}

}  // namespace plab
