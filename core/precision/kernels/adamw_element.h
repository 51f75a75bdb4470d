#pragma once
// The math of one element of a fused AdamW step, shared by the CPU loop and
// the CUDA kernel (see fused_adamw.h for the contract).
#include <cmath>

#include "precision/kernels/bf16_bits.h"
#include "precision/kernels/fused_adamw.h"

namespace plab::kernels {

// One AdamW step of one weight in fp32, in torch::optim::AdamW's order:
// decay, m, v, denominator, update. m and v are updated in place.
PLAB_HD float adamwElement(float w, float g, float& m, float& v, const AdamWScalars& s) {
  if (s.decays) w = w * s.decay;
  m = m * s.beta1;
  m = m + s.oneMinusBeta1 * g;
  v = v * s.beta2;
  v = v + s.oneMinusBeta2 * g * g;
  const float denom = sqrtf(v) / s.sqrtBiasCorrection2 + s.eps;
  return w + s.negStepSize * (m / denom);
}

PLAB_HD float loadMoment(const float* p, int64_t i) { return p[i]; }
PLAB_HD float loadMoment(const uint16_t* p, int64_t i) { return bf16ToFloat(p[i]); }
PLAB_HD void storeMoment(float* p, int64_t i, float x, MomentStore, uint32_t) { p[i] = x; }
PLAB_HD void storeMoment(uint16_t* p, int64_t i, float x, MomentStore store, uint32_t random16) {
  p[i] = store == MomentStore::Bf16Stochastic ? bf16Stochastic(x, random16) : bf16Nearest(x);
}

// What one element's step did, for the statistics: the fp32 weight the update
// started from (the master in mixed mode, else the compute weight) and its
// fp32 result, and the compute weight before and after.
struct ElementResult {
  float origin, updated, before, after;
};

// The random bits of the element's group: weight, m and v streams.
struct GroupRandoms {
  Philox4 weight, m, v;
};

PLAB_HD GroupRandoms groupRandoms(const FusedAdamWArgs& a, uint64_t group) {
  GroupRandoms r{};
  RandomStream s = a.random;
  if (a.rule == WeightRule::Stochastic) r.weight = randomGroup(s, group);
  if (a.moments == MomentStore::Bf16Stochastic) {
    s.stream = a.random.stream + 1;
    r.m = randomGroup(s, group);
    s.stream = a.random.stream + 2;
    r.v = randomGroup(s, group);
  }
  return r;
}

template <WeightRule Rule, typename Moment>
PLAB_HD ElementResult stepElement(const FusedAdamWArgs& a, int64_t i, const GroupRandoms& r) {
  Moment* mp = static_cast<Moment*>(a.m);
  Moment* vp = static_cast<Moment*>(a.v);
  const uint64_t index = static_cast<uint64_t>(i);
  const float before = bf16ToFloat(a.param[i]);
  const float g = bf16ToFloat(a.grad[i]);
  float m = loadMoment(mp, i);
  float v = loadMoment(vp, i);
  const float origin = Rule == WeightRule::Master ? a.master[i] : before;
  const float updated = adamwElement(origin, g, m, v, a.s);
  storeMoment(mp, i, m, a.moments, random16Of(r.m, index));
  storeMoment(vp, i, v, a.moments, random16Of(r.v, index));

  uint16_t written;
  if (Rule == WeightRule::Nearest) {
    written = bf16Nearest(updated);
  } else if (Rule == WeightRule::Stochastic) {
    written = bf16Stochastic(updated, random16Of(r.weight, index));
  } else if (Rule == WeightRule::Kahan) {
    // The buffer holds what earlier writes lost; it joins this update, and
    // what this write loses in turn goes back into it.
    const float total = bf16ToFloat(a.comp[i]) + (updated - before);
    written = bf16Nearest(before + total);
    a.comp[i] = bf16Nearest(total - (bf16ToFloat(written) - before));
  } else {
    a.master[i] = updated;
    written = bf16Nearest(updated);
  }
  a.param[i] = written;
  return {origin, updated, before, bf16ToFloat(written)};
}

// Adds one element's intended update (exact in fp64) and stored change.
PLAB_HD void addToSums(StepSums& sums, const ElementResult& e) {
  const double intended = static_cast<double>(e.updated) - static_cast<double>(e.origin);
  const double change = static_cast<double>(e.after) - static_cast<double>(e.before);
  if (intended != 0) {
    sums.intendedNonZero += 1;
    if (e.after == e.before) sums.roundedAway += 1;
  }
  sums.intendedSq += intended * intended;
  sums.changeSq += change * change;
}

}  // namespace plab::kernels
