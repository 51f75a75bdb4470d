#include "precision/decay_effect.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "precision/kernels/bf16_bits.h"
#include "precision/kernels/fp16_bits.h"

namespace plab {
namespace {

// fp32 arithmetic made explicit: the product of two floats is exact in
// double, so one cast rounds it once, as an fp32 multiply does (and no
// compiler can fuse it into a multiply-add). The sums here add numbers
// within 2^29 of each other, also exact in double.
float mul32(float a, float b) { return static_cast<float>(static_cast<double>(a) * static_cast<double>(b)); }
float add32(float a, float b) { return static_cast<float>(static_cast<double>(a) + static_cast<double>(b)); }
float sub32(float a, float b) { return static_cast<float>(static_cast<double>(a) - static_cast<double>(b)); }
float bf16(float x) { return kernels::bf16ToFloat(kernels::bf16Nearest(x)); }

// The 128 bf16 values in [1, 2), each with the share of log-uniform real
// weights that round to it (shares sum to 1; m = 1 also takes the half
// ulp below it, whose ulp is half as large).
struct Mantissa {
  float value;
  double share;
};
const std::vector<Mantissa>& bf16Mantissas() {
  static const std::vector<Mantissa> all = [] {
    std::vector<Mantissa> v;
    for (int k = 0; k < 128; ++k) {
      const double m = 1.0 + k / 128.0;
      const double lo = k == 0 ? 1.0 - std::ldexp(1.0, -9) : m - std::ldexp(1.0, -8);
      v.push_back({static_cast<float>(m), std::log2((m + std::ldexp(1.0, -8)) / lo)});
    }
    return v;
  }();
  return all;
}

// fp32 weights: 4096 log-uniform quantiles of [1, 2) (the fp32 grid has 2^23).
constexpr int kFp32Samples = 4096;
// From here on a step moves every fp32 weight by thousands of ulps: the
// product's rounding changes the decay by less than 0.03 %, and f's own
// rounding is all that is left.
const double kFp32Exact = std::ldexp(1.0, -12);

DecayStepEffect fp32Effect(float f) {
  const double d = 1.0 - static_cast<double>(f);
  DecayStepEffect e;
  if (d <= 0) {
    e.vanishedFraction = 1;
    return e;
  }
  if (d >= kFp32Exact) {
    e.effective = d;
    return e;
  }
  static const std::vector<float> weights = [] {
    std::vector<float> v;
    for (int i = 0; i < kFp32Samples; ++i) v.push_back(static_cast<float>(std::exp2((i + 0.5) / kFp32Samples)));
    return v;
  }();
  double sum = 0, kept = 0;
  for (const float w : weights) {
    const float after = mul32(w, f);
    sum += (static_cast<double>(w) - after) / w;
    kept += after == w ? 1 : 0;
  }
  e.effective = sum / kFp32Samples;
  e.vanishedFraction = kept / kFp32Samples;
  return e;
}

// "bf16", "bf16-nearest": nearest(fp32(w·f)).
DecayStepEffect nearestEffect(float f) {
  DecayStepEffect e;
  for (const Mantissa& m : bf16Mantissas()) {
    const float after = bf16(mul32(m.value, f));
    e.effective += m.share * (static_cast<double>(m.value) - after) / m.value;
    e.vanishedFraction += after == m.value ? m.share : 0;
  }
  return e;
}

// "fp16": nearest(fp32(w·f)) on fp16's grid (10 mantissa bits), the 1024
// values of [1, 2) weighted as bf16Mantissas weighs its 128.
DecayStepEffect fp16NearestEffect(float f) {
  DecayStepEffect e;
  for (int k = 0; k < 1024; ++k) {
    const double m = 1.0 + k / 1024.0;
    const double lo = k == 0 ? 1.0 - std::ldexp(1.0, -12) : m - std::ldexp(1.0, -11);
    const double share = std::log2((m + std::ldexp(1.0, -11)) / lo);
    const float value = static_cast<float>(m);
    const float after = kernels::fp16ToFloat(kernels::fp16FromFloat(mul32(value, f)));
    e.effective += share * (static_cast<double>(value) - after) / value;
    e.vanishedFraction += after == value ? share : 0;
  }
  return e;
}

// "bf16-kahan" (kernels/adamw_element.h): total = c + (fp32(w·f) - w),
// w' = nearest(w + total), c = nearest(total - (w' - w)). The buffer grows
// by the decay each step until the weight moves; but the buffer is bf16 too:
// an increment below half its ulp rounds away (the weight then never moves
// again: its decay vanished), one above half an ulp adds a whole ulp. So a
// weight's rate is measured from the buffer's own steps: from an empty
// buffer to its first move (the start-up, not counted), then over the next
// full cycle, to its second move.
// Above 2^-14 the buffer reaches half an ulp of every weight long before its
// own rounding matters (tested); there Kahan keeps the fp32 decay.
const double kKahanLikeFp32 = std::ldexp(1.0, -14);
// Below, each weight's buffer is simulated (up to a few thousand steps per
// mantissa), at 32 values of lr·wd per octave: the result's ratio to the
// asked decay is taken from the nearest one (2.2 % apart), computed once
// per process.
constexpr int kKahanGridPerOctave = 32;

DecayStepEffect kahanCycleEffect(float f) {
  double stalled = 0, effective = 0;
  for (const Mantissa& m : bf16Mantissas()) {
    float w = m.value, c = 0;
    int moves = 0;
    int64_t firstMove = 0;
    double heldAtFirstMove = 0, rate = -1;
    // A cycle takes about 2^-7 / (lr·wd) steps; the bound is far above that
    // of lr·wd = 2^-20, where every buffer stalls within a few hundred steps.
    for (int64_t t = 1; t <= (int64_t(1) << 17); ++t) {
      const float total = add32(c, sub32(mul32(w, f), w));
      const float after = bf16(add32(w, total));
      const float next = bf16(sub32(total, sub32(after, w)));
      if (after == w && next == c) break;  // stuck for good
      const bool moved = after != w;
      w = after, c = next;
      if (!moved) continue;
      const double held = static_cast<double>(w) + c;
      if (++moves == 1) {
        firstMove = t, heldAtFirstMove = held;
      } else {
        rate = (heldAtFirstMove - held) / (heldAtFirstMove * static_cast<double>(t - firstMove));
        break;
      }
    }
    if (rate < 0) stalled += m.share;
    else effective += m.share * rate;
  }
  DecayStepEffect e;
  e.vanishedFraction = std::min(1.0, stalled);  // the shares sum to 1 up to rounding
  e.effective = effective;
  return e;
}

DecayStepEffect kahanEffect(float f) {
  const double d = 1.0 - static_cast<double>(f);
  if (d >= kKahanLikeFp32 || d <= 0) return fp32Effect(f);
  const double grid = std::exp2(std::round(std::log2(d) * kKahanGridPerOctave) / kKahanGridPerOctave);
  const float gridFactor = static_cast<float>(1.0 - grid);
  const double gridDecay = 1.0 - static_cast<double>(gridFactor);
  uint32_t key = 0;
  std::memcpy(&key, &gridFactor, sizeof key);
  static std::mutex mutex;
  static std::unordered_map<uint32_t, DecayStepEffect> cache;
  DecayStepEffect e;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it == cache.end()) it = cache.emplace(key, kahanCycleEffect(gridFactor)).first;
    e = it->second;
  }
  e.effective *= d / gridDecay;
  return e;
}

DecayStepEffect effectOfFactor(OptimizerMode mode, float f) {
  switch (mode) {
    case OptimizerMode::Bf16Plain:
    case OptimizerMode::Bf16Nearest: return nearestEffect(f);
    case OptimizerMode::Bf16Kahan: return kahanEffect(f);
    // Unbiased: the expected bf16 value is fp32(w·f) itself.
    case OptimizerMode::Bf16StochasticRounding:
    case OptimizerMode::Fp32AdamW:
    case OptimizerMode::Fp32MasterWeights:
    case OptimizerMode::Fp16Mixed: return fp32Effect(f);  // the fp32 master decays
    case OptimizerMode::Fp16Plain: return fp16NearestEffect(f);
  }
  return fp32Effect(f);
}

// The factor every step computes: fused_step.cpp's float(1 - lr·wd), and
// torch's bf16/fp32 mul_ by the Python float 1 - lr·wd (cast to fp32).
float decayFactor(double lrTimesWd) { return static_cast<float>(1.0 - lrTimesWd); }

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}
std::string percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, share > 0 && share < 0.01 ? "%.2g %%" : "%.0f %%", 100 * share);
  return buf;
}

}  // namespace

DecayStepEffect decayStepEffect(OptimizerMode mode, double lrTimesWd) {
  DecayStepEffect e = effectOfFactor(mode, decayFactor(lrTimesWd));
  e.intended = lrTimesWd;
  return e;
}

std::string decayVerdictId(DecayVerdict v) {
  switch (v) {
    case DecayVerdict::Fine: return "fine";
    case DecayVerdict::Distorted: return "distorted";
    case DecayVerdict::Vanished: return "vanished";
  }
  return "fine";
}

DecayVerdict decayVerdictFromId(const std::string& id) {
  if (id == "distorted") return DecayVerdict::Distorted;
  if (id == "vanished") return DecayVerdict::Vanished;
  return DecayVerdict::Fine;
}

DecayAssessment assessWeightDecay(OptimizerMode mode, double weightDecay, const std::vector<double>& lrPerStep) {
  return assessWeightDecay(mode, weightDecay, static_cast<int64_t>(lrPerStep.size()),
                           [&](int64_t step) { return lrPerStep[static_cast<size_t>(step - 1)]; });
}

DecayAssessment assessWeightDecay(OptimizerMode mode, double weightDecay, int64_t steps,
                                  const std::function<double(int64_t)>& lrAt) {
  DecayAssessment a;
  // A schedule repeats few distinct fp32 factors; each is computed once.
  std::unordered_map<uint32_t, DecayStepEffect> byFactor;
  double off = 0, vanished = 0, peak = 0, worstOff = -1, worstVanished = -1;
  int64_t peakStep = 0, worstOffStep = 0, worstVanishedStep = 0;
  DecayStepEffect peakEffect, worstOffEffect, worstVanishedEffect;
  uint32_t lastKey = 0;
  bool haveLast = false;
  DecayStepEffect last;
  for (int64_t step = 1; step <= steps; ++step) {
    const double x = lrAt(step) * weightDecay;
    if (!(x > 0)) continue;
    const float f = decayFactor(x);
    uint32_t key = 0;
    std::memcpy(&key, &f, sizeof key);
    if (!haveLast || key != lastKey) {
      auto it = byFactor.find(key);
      if (it == byFactor.end()) it = byFactor.emplace(key, effectOfFactor(mode, f)).first;
      lastKey = key, last = it->second, haveLast = true;
    }
    DecayStepEffect e = last;
    e.intended = x;
    a.runIntended += x;
    a.runEffective += e.effective;
    if (x > peak) peak = x, peakStep = step, peakEffect = e;
    // Off: the mean is wrong, or right only because some weights decay too
    // much while many others do not decay at all.
    const double error = std::max(std::abs(e.effective - x), e.vanishedFraction * x);
    if (error > kDecayTolerance * x) {
      off += x;
      if (a.firstOffStep == 0) a.firstOffStep = step;
      if (error > worstOff) worstOff = error, worstOffStep = step, worstOffEffect = e;
    }
    if (e.effective < kDecayTolerance * x) {
      vanished += x;
      if (error > worstVanished) worstVanished = error, worstVanishedStep = step, worstVanishedEffect = e;
    }
  }
  if (a.runIntended <= 0) return a;
  a.shareOff = off / a.runIntended;
  a.shareVanished = vanished / a.runIntended;
  if (a.shareVanished > kDecayMaterialShare) {
    a.verdict = DecayVerdict::Vanished;
    a.atStep = worstVanishedStep, a.at = worstVanishedEffect;
  } else if (a.shareOff > kDecayMaterialShare) {
    a.verdict = DecayVerdict::Distorted;
    a.atStep = worstOffStep, a.at = worstOffEffect;
  } else {
    a.atStep = peakStep, a.at = peakEffect;
  }
  return a;
}

std::string describeDecayAssessment(OptimizerMode mode, const DecayAssessment& a) {
  if (a.verdict == DecayVerdict::Fine) return "";
  const bool nearest = mode == OptimizerMode::Bf16Plain || mode == OptimizerMode::Bf16Nearest ||
                       mode == OptimizerMode::Fp16Plain;
  std::string s = "weight decay " + std::string(a.verdict == DecayVerdict::Vanished ? "is rounded away" : "is distorted") +
                  " in mode " + optimizerModeId(mode) + ": at step " + std::to_string(a.atStep) + " lr × wd = " +
                  num(a.at.intended) + ", " + percent(a.at.vanishedFraction) + " of the weights never decay";
  if (nearest && a.at.vanishedFraction < 1)
    s += std::string(", the others lose a whole ") + (mode == OptimizerMode::Fp16Plain ? "fp16" : "bf16") + " ulp";
  s += " (effective " + num(a.at.effective) + " per step, asked " + num(a.at.intended) + "); steps off by more than " +
       percent(kDecayTolerance) + " carry " + percent(a.shareOff) + " of the run's decay, from step " +
       std::to_string(a.firstOffStep);
  if (mode == OptimizerMode::Bf16Plain || mode == OptimizerMode::Fp16Plain)
    s += " (torch rounds the decay step on its own, so gradients do not bring it back)";
  else if (nearest || mode == OptimizerMode::Bf16Kahan)
    s += " (pure-decay steps: weights with zero gradient or Adam updates below an ulp; where the updates span "
         "ulps the decay is rounded with them and mostly survives)";
  else
    s += " (fp32 rounds 1 - lr × wd and the product)";
  return s;
}

nlohmann::json toJson(const DecayAssessment& a) {
  return {{"verdict", decayVerdictId(a.verdict)},
          {"at_step", a.atStep},
          {"intended", a.at.intended},
          {"effective", a.at.effective},
          {"vanished_fraction", a.at.vanishedFraction},
          {"first_off_step", a.firstOffStep},
          {"share_off", a.shareOff},
          {"share_vanished", a.shareVanished},
          {"run_intended", a.runIntended},
          {"run_effective", a.runEffective}};
}

DecayAssessment decayAssessmentFromJson(const nlohmann::json& j) {
  DecayAssessment a;
  if (!j.is_object()) return a;
  auto number = [&](const char* key, double fallback) {
    return j.contains(key) && j[key].is_number() ? j[key].get<double>() : fallback;
  };
  auto integer = [&](const char* key) {
    return j.contains(key) && j[key].is_number_integer() ? j[key].get<int64_t>() : int64_t(0);
  };
  if (j.contains("verdict") && j["verdict"].is_string()) a.verdict = decayVerdictFromId(j["verdict"].get<std::string>());
  a.atStep = integer("at_step");
  a.at.intended = number("intended", 0);
  a.at.effective = number("effective", 0);
  a.at.vanishedFraction = number("vanished_fraction", 0);
  a.firstOffStep = integer("first_off_step");
  a.shareOff = number("share_off", 0);
  a.shareVanished = number("share_vanished", 0);
  a.runIntended = number("run_intended", 0);
  a.runEffective = number("run_effective", 0);
  return a;
}

}  // namespace plab
