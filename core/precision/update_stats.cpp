#include "precision/update_stats.h"

#include <cmath>

namespace plab {

double LayerWindowStats::updateLost() const {
  return intendedSumSq > 0 ? 0.0 - residualDotIntended / intendedSumSq : 0.0;  // never -0.0
}

double LayerWindowStats::updateError() const {
  return intendedSumSq > 0 ? std::sqrt(residualSq / intendedSumSq) : 0.0;
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
    t.trackedElements += l.trackedElements;
  }
  return t;
}

}  // namespace plab
