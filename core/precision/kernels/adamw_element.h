#pragma once
// The math of one element of a fused AdamW step, shared by the CPU loop and
// the CUDA kernel (see fused_adamw.h for the contract).
#include <cmath>

#include "precision/kernels/bf16_bits.h"
#include "precision/kernels/fused_adamw.h"

namespace plab::kernels {

// One AdamW step of one weight in fp32, in torch::optim::AdamW's order:
// decay, m, v, denominator, update; the update is -step * (m / denom) (torch's
// addcdiv_ rounds (-step * m) / denom). Each operation is rounded once (no
// fused multiply-add): steps::elementOrderAdamwInPlace is the same arithmetic
// in tensor ops. m and v are updated in place. Without weight decay the
// factor is exactly 1 and the product the weight itself.
PLAB_HD float adamwElement(float w, float g, float& m, float& v, const AdamWScalars& s) {
  w = w * s.decay;
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
  const uint16_t stochastic = bf16Stochastic(x, random16), nearest = bf16Nearest(x);
  p[i] = store == MomentStore::Bf16Stochastic ? stochastic : nearest;
}

// The bf16 weight a rule writes for the fp32 result `updated` of a step
// from the bf16 weight `weight` (and Kahan's buffer `comp`, bf16 value).
struct Bf16Write {
  uint16_t weight;
  uint16_t comp;  // Kahan only
};
template <WeightRule Rule>
PLAB_HD Bf16Write writeBf16(float weight, float comp, float updated, uint32_t random16) {
  Bf16Write out{};
  if (Rule == WeightRule::Nearest || Rule == WeightRule::Master) {
    out.weight = bf16Nearest(updated);
  } else if (Rule == WeightRule::Stochastic) {
    out.weight = bf16Stochastic(updated, random16);
  } else {
    // The buffer holds what earlier writes lost; it joins this update, and
    // what this write loses in turn goes back into it.
    const float total = comp + (updated - weight);
    out.weight = bf16Nearest(weight + total);
    out.comp = bf16Nearest(total - (bf16ToFloat(out.weight) - weight));
  }
  return out;
}

// torch's lerp(self, end, weight) with a Python-number weight as
// torch.compile's decomposition computes it (torch/_inductor/decomposition.py,
// _lerp_scalar): self + (end - self) * weight for |weight| < 0.5, else
// end + (end - self) * -(1 - weight), each operation rounded once (the CPU
// code inductor generates multiplies and adds separately; torch's eager CPU
// lerp fuses them into one fma and rounds differently).
struct LerpWeight {
  float coefficient;  // weight, or -(1 - weight) (computed in double, then fp32)
  bool fromEnd;       // |weight| >= 0.5
};
PLAB_HD float lerpAsCompiled(float self, float end, LerpWeight w) {
  const float diff = end - self;
  return (w.fromEnd ? end : self) + diff * w.coefficient;
}

// The fp32 scalars of torchao's single_param_adam (torchao/optim/adam.py)
// as torch.compile computes them on the CPU: lr and the step count are fp32
// tensors, so lr * weight_decay, beta^step (powf), the bias corrections and
// sqrt(1 - beta2^step) are fp32 operations on fp32(beta), fp32(weight_decay).
struct TorchaoScalars {
  float lrTimesDecay = 0;  // fp32(lr) * fp32(weight_decay)
  float lr = 0;
  LerpWeight m{0.1f, false}, v{0.001f, false};  // the lerp weights 1 - beta1, 1 - beta2
  float biasCorrection1 = 1;                    // 1 - beta1^step
  float sqrtBiasCorrection2 = 1;                // sqrt(1 - beta2^step)
  float eps = 1e-8f;
};

// One element of torchao's AdamW step (AdamW8bit / 4bit / Fp8 share it) as
// torch.compile'd on the CPU (what users run; torchao compiles it): decay as
// w - (lr * wd) * w, m and v by lerp from the stored (dequantized) moments,
// a correctly rounded square root, the update lr * (m / bc1) / denom. m and
// v come out in fp32 (the step uses them before they are quantized).
// Returns the fp32 weight.
PLAB_HD float torchaoAdamwElement(float w, float g, float& m, float& v, const TorchaoScalars& s) {
  w = w - s.lrTimesDecay * w;
  m = lerpAsCompiled(m, g, s.m);
  v = lerpAsCompiled(v, g * g, s.v);
  const float denom = sqrtf(v) / s.sqrtBiasCorrection2 + s.eps;
  return w - s.lr * (m / s.biasCorrection1) / denom;
}

// One element's values as loaded (fp32; bf16 state upcast).
struct ElementIn {
  float weight;  // the compute weight (bf16 value)
  float grad;
  float m, v;
  float master;  // Master only
  float comp;    // Kahan only
};

// Its new values. `updated` is the fp32 result of the AdamW step and
// `origin` the fp32 weight it started from (the master in mixed mode, else
// the compute weight): their difference is the intended update.
struct ElementOut {
  float m, v;
  float origin, updated;
  uint16_t weight;  // bf16 bits written to the compute weight
  uint16_t comp;    // Kahan only
};

// The whole step of one element as a pure function of its values: the CPU
// loop and the CUDA kernel load, call this, and store.
template <WeightRule Rule>
PLAB_HD ElementOut stepValues(const ElementIn& in, const AdamWScalars& s, uint32_t randomWeight) {
  ElementOut out{};
  out.m = in.m;
  out.v = in.v;
  out.origin = Rule == WeightRule::Master ? in.master : in.weight;
  out.updated = adamwElement(out.origin, in.grad, out.m, out.v, s);
  const Bf16Write w = writeBf16<Rule>(in.weight, in.comp, out.updated, randomWeight);
  out.weight = w.weight;
  out.comp = w.comp;
  return out;
}

// What one element's step did, for the statistics: the intended update's
// two ends and the compute weight before and after.
struct ElementResult {
  float origin, updated, before, after;
};

// The random bits of a group of 8 elements: weight, m and v streams.
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

// Load, step, store element i in place (the CUDA kernel's form; the CPU
// loop does the same with its pointers hoisted for vectorisation).
template <WeightRule Rule, typename Moment>
PLAB_HD ElementResult stepElement(const FusedAdamWArgs& a, int64_t i, uint32_t randomWeight, uint32_t randomM,
                                  uint32_t randomV) {
  Moment* mp = static_cast<Moment*>(a.m);
  Moment* vp = static_cast<Moment*>(a.v);
  ElementIn in{};
  in.weight = bf16ToFloat(a.param[i]);
  in.grad = bf16ToFloat(a.grad[i]);
  in.m = loadMoment(mp, i);
  in.v = loadMoment(vp, i);
  if (Rule == WeightRule::Master) in.master = a.master[i];
  if (Rule == WeightRule::Kahan) in.comp = bf16ToFloat(a.comp[i]);
  const ElementOut out = stepValues<Rule>(in, a.s, randomWeight);
  storeMoment(mp, i, out.m, a.moments, randomM);
  storeMoment(vp, i, out.v, a.moments, randomV);
  if (Rule == WeightRule::Master) a.master[i] = out.updated;
  if (Rule == WeightRule::Kahan) a.comp[i] = out.comp;
  a.param[i] = out.weight;
  return {out.origin, out.updated, in.weight, bf16ToFloat(out.weight)};
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
