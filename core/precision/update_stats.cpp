#include "precision/update_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace plab {

double LayerWindowStats::updateLost() const {
  return intendedSumSq > 0 ? 0.0 - residualDotIntended / intendedSumSq : 0.0;  // never -0.0
}

double LayerWindowStats::updateError() const {
  return intendedSumSq > 0 ? std::sqrt(residualSq / intendedSumSq) : 0.0;
}

double LayerWindowStats::updateNoise() const {
  return intendedSumSq > 0 ? std::sqrt(noiseSq / intendedSumSq) : 0.0;
}

double LayerWindowStats::updatePending() const {
  return intendedSumSq > 0 ? pendingDotIntended / intendedSumSq : 0.0;
}

double LayerWindowStats::updateLostStdError() const {
  if (!(intendedSumSq > 0)) return 0.0;
  const double r = residualDotIntended / intendedSumSq;
  double sumSq = 0;
  for (int g = 0; g < kLostGroups; ++g) {
    const double e = groupResidualDotIntended[g] - r * groupIntendedSumSq[g];
    sumSq += e * e;
  }
  // Groups that hold elements (all of them once a tensor has kLostGroups).
  const int64_t groups = std::min<int64_t>(kLostGroups, trackedElements);
  const double stochastic = std::sqrt(stochasticVarianceTerm) / intendedSumSq;
  // One group alone has no spread to measure: nothing is known.
  if (groups < 2) return INFINITY;
  return std::max(stochastic, std::sqrt(double(groups) / double(groups - 1) * sumSq) / intendedSumSq);
}

LayerUpdateStats totalOf(const std::vector<LayerUpdateStats>& layers, const std::string& name) {
  LayerUpdateStats t;
  t.layer = name;
  for (const LayerUpdateStats& l : layers) {
    t.numel += l.numel;
    t.intendedNonZero += l.intendedNonZero;
    t.roundedAway += l.roundedAway;
    t.intendedNormSq += l.intendedNormSq;
    t.effectiveNormSq += l.effectiveNormSq;
  }
  return t;
}

LayerWindowStats totalOf(const std::vector<LayerWindowStats>& layers, const std::string& name) {
  LayerWindowStats t;
  t.layer = name;
  for (const LayerWindowStats& l : layers) {
    t.residualDotIntended += l.residualDotIntended;
    t.intendedSumSq += l.intendedSumSq;
    t.residualSq += l.residualSq;
    t.noiseSq += l.noiseSq;
    t.pendingDotIntended += l.pendingDotIntended;
    t.trackedElements += l.trackedElements;
    t.stochasticVarianceTerm += l.stochasticVarianceTerm;
    // The total's moments lost is over the layers that measured it.
    t.momentsMeasured = t.momentsMeasured || l.momentsMeasured;
    for (int k = 0; k < 2; ++k) {
      t.momentErrorSq[k] += l.momentErrorSq[k];
      t.momentSq[k] += l.momentSq[k];
    }
    // Group g of every layer together is still an interleaved share of all elements.
    for (int g = 0; g < kLostGroups; ++g) {
      t.groupResidualDotIntended[g] += l.groupResidualDotIntended[g];
      t.groupIntendedSumSq[g] += l.groupIntendedSumSq[g];
    }
  }
  return t;
}

std::optional<double> LayerWindowStats::momentError(int moment) const {
  if (!momentsMeasured) return std::nullopt;
  return momentSq[moment] > 0 ? std::sqrt(momentErrorSq[moment] / momentSq[moment]) : 0.0;
}

void addWindowTerms(LayerWindowStats& l, const double* t) {
  l.residualDotIntended += t[0];
  l.intendedSumSq += t[1];
  l.residualSq += t[2];
  l.trackedElements += static_cast<int64_t>(t[3]);
  l.pendingDotIntended += t[4];
  for (int g = 0; g < kLostGroups; ++g) {
    l.groupResidualDotIntended[g] += t[5 + g];
    l.groupIntendedSumSq[g] += t[5 + kLostGroups + g];
  }
  l.stochasticVarianceTerm += t[5 + 2 * kLostGroups];
  l.noiseSq += t[6 + 2 * kLostGroups];
}

LostEvidence lostEvidence(std::optional<double> stdError, int64_t elements, bool intended) {
  LostEvidence e;
  char buf[200];
  if (!intended) {
    e.enough = false;
    e.reason = "nothing was intended in this window";
  } else if (!stdError) {
    return e;
  } else if (!std::isfinite(*stdError)) {
    e.enough = false;
    std::snprintf(buf, sizeof buf, "too few elements (%lld) to estimate the uncertainty",
                  static_cast<long long>(elements));
    e.reason = buf;
  } else if (*stdError > kMaxLostStdError) {
    e.enough = false;
    std::snprintf(buf, sizeof buf,
                  "not enough evidence: the uncertainty (+-%.1f points) is above %.0f points%s", 100 * *stdError,
                  100 * kMaxLostStdError,
                  elements > 0 ? (" with " + std::to_string(elements) + " elements").c_str() : "");
    e.reason = buf;
  }
  return e;
}

}  // namespace plab
