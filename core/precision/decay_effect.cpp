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

// ---- Adam updates rounded together with the decay ("bf16-nearest") ----

double normalCdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }
double normalPdf(double z) { return std::exp(-0.5 * z * z) / std::sqrt(2.0 * M_PI); }

// E[bf16(c + u)] - c for u ~ N(0, s^2): the mean rounding error, summed
// cell by cell over the bf16 grid within 12 s of c (c > 0, far from 0
// compared with s). In a cell [lo, hi] around grid value y:
// integral of (y - x) phi((x - c)/s)/s dx = (y - c)(Phi(b) - Phi(a)) - s (phi(a) - phi(b)).
double meanRoundingError(double c, double s) {
  const float lowest = static_cast<float>(c - 12 * s);
  uint16_t bits = kernels::bf16Nearest(lowest);
  if (bits > 0) --bits;  // one cell below, so the first cell's lower edge is below c - 12 s
  double sum = 0;
  double y = kernels::bf16ToFloat(bits);
  double lo = -INFINITY;
  while (true) {
    const double next = kernels::bf16ToFloat(static_cast<uint16_t>(bits + 1));
    const double hi = 0.5 * (y + next);  // ties: the even one takes them, a set of measure zero
    const double a = std::isinf(lo) ? -INFINITY : (lo - c) / s, b = (hi - c) / s;
    const double pa = std::isinf(a) ? 0.0 : normalPdf(a);
    sum += (y - c) * (normalCdf(b) - (std::isinf(a) ? 0.0 : normalCdf(a))) - s * (pa - normalPdf(b));
    if (hi > c + 12 * s) {
      // The cell above takes the rest of the tail.
      sum += (next - c) * (1 - normalCdf(b)) - s * normalPdf(b);
      break;
    }
    lo = hi, y = next, ++bits;
  }
  return sum;
}

// ---- messages ----

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}
std::string shareText(double share) {
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

double adamNoiseUpdateScale(double beta1) {
  return beta1 >= 0 && beta1 < 1 ? std::sqrt((1 - beta1) / (1 + beta1)) : 0.0;
}

UpdateDither updateDitherOf(std::vector<float> weightMagnitudes, double beta1) {
  constexpr size_t kQuantiles = 512;
  std::vector<float> w;
  for (float v : weightMagnitudes)
    if (std::isfinite(v) && v != 0) w.push_back(std::fabs(v));
  std::sort(w.begin(), w.end());
  UpdateDither d;
  d.updateScale = adamNoiseUpdateScale(beta1);
  if (w.size() <= kQuantiles) {
    d.weights = std::move(w);
    return d;
  }
  for (size_t i = 0; i < kQuantiles; ++i) d.weights.push_back(w[(2 * i + 1) * w.size() / (2 * kQuantiles)]);
  return d;
}

double ditheredDecayShare(float a, double lr, double weightDecay, double updateScale) {
  a = std::fabs(kernels::bf16ToFloat(kernels::bf16Nearest(a)));  // on the grid the weights live on
  const float f = decayFactor(lr * weightDecay);
  const double product = mul32(a, f);
  const double d = static_cast<double>(a) - product;  // what fp32 delivers
  if (!(a > 0) || !std::isfinite(a) || !(d > 0)) return 0.0;
  const double ulp = std::ldexp(1.0, std::ilogb(a) - 7);
  const double s = updateScale * lr;
  // The grid sum needs c - 12 s > 0 and few cells; beyond two ulps the
  // rounding error's mean is below 1e-9 ulp (its Fourier series decays as
  // exp(-2 pi^2 s^2 / ulp^2)).
  if (s >= 2 * ulp) return 1.0;
  if (s < ulp * 1e-6) return (static_cast<double>(a) - bf16(static_cast<float>(product))) / d;  // pure decay
  return 1.0 - (meanRoundingError(product, s) - meanRoundingError(a, s)) / d;
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

DecayAssessment assessWeightDecay(OptimizerMode mode, double weightDecay, const std::vector<double>& lrPerStep,
                                  const UpdateDither& dither) {
  return assessWeightDecay(
      mode, weightDecay, static_cast<int64_t>(lrPerStep.size()),
      [&](int64_t step) { return lrPerStep[static_cast<size_t>(step - 1)]; }, dither);
}

namespace {

// One "bf16-nearest" step with the updates rounded in, over the sampled
// weights: each weight's share weighted by w², as decay acts on |w|² (and
// as test_decay_effect measures what the real optimizer delivers).
DecayStepEffect ditheredEffect(double lr, double weightDecay, const UpdateDither& dither) {
  DecayStepEffect e;
  double sum = 0, norm = 0, kept = 0;
  for (float w : dither.weights) {
    const double share = ditheredDecayShare(w, lr, weightDecay, dither.updateScale);
    const double w2 = static_cast<double>(w) * w;
    sum += w2 * share;
    norm += w2;
    kept += share < kDecayTolerance ? 1 : 0;
  }
  e.effective = norm > 0 ? lr * weightDecay * sum / norm : 0.0;
  e.vanishedFraction = kept / static_cast<double>(dither.weights.size());
  return e;
}

}  // namespace

DecayAssessment assessWeightDecay(OptimizerMode mode, double weightDecay, int64_t steps,
                                  const std::function<double(int64_t)>& lrAt, const UpdateDither& dither) {
  DecayAssessment a;
  // "bf16-nearest" rounds the update and the decay together: where the
  // weights are known, the step's effect depends on lr, not only on lr·wd.
  const bool dithered = mode == OptimizerMode::Bf16Nearest && !dither.weights.empty() && dither.updateScale > 0;
  if (dithered) a.updateScale = dither.updateScale;
  // Dithered effects by lr, on a grid of 64 values per octave (1.1 % apart;
  // the share changes by less than that between them).
  std::unordered_map<int64_t, DecayStepEffect> byLr;
  // A schedule repeats few distinct fp32 factors; each is computed once.
  std::unordered_map<uint32_t, DecayStepEffect> byFactor;
  double off = 0, vanished = 0, peak = 0, worstOff = -1, worstVanished = -1;
  int64_t peakStep = 0, worstOffStep = 0, worstVanishedStep = 0;
  DecayStepEffect peakEffect, worstOffEffect, worstVanishedEffect;
  uint32_t lastKey = 0;
  bool haveLast = false;
  DecayStepEffect last;
  for (int64_t step = 1; step <= steps; ++step) {
    const double lr = lrAt(step);
    const double x = lr * weightDecay;
    if (!(x > 0)) continue;
    DecayStepEffect e;
    if (dithered) {
      const auto grid = static_cast<int64_t>(std::llround(std::log2(lr) * 64));
      auto it = byLr.find(grid);
      if (it == byLr.end()) it = byLr.emplace(grid, ditheredEffect(std::exp2(grid / 64.0), weightDecay, dither)).first;
      e = it->second;
      e.effective *= lr / std::exp2(grid / 64.0);  // the grid lr's share, at this lr's decay
    } else {
      const float f = decayFactor(x);
      uint32_t key = 0;
      std::memcpy(&key, &f, sizeof key);
      if (!haveLast || key != lastKey) {
        auto it = byFactor.find(key);
        if (it == byFactor.end()) it = byFactor.emplace(key, effectOfFactor(mode, f)).first;
        lastKey = key, last = it->second, haveLast = true;
      }
      e = last;
    }
    e.intended = x;
    e.lr = lr;
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

std::string describeDecayAssessment(OptimizerMode mode, const DecayAssessment& a, bool torchFused) {
  if (a.verdict == DecayVerdict::Fine) return "";
  const bool nearest = mode == OptimizerMode::Bf16Plain || mode == OptimizerMode::Bf16Nearest ||
                       mode == OptimizerMode::Fp16Plain;
  std::string s = "weight decay " + std::string(a.verdict == DecayVerdict::Vanished ? "is rounded away" : "is distorted") +
                  " in mode " + optimizerModeId(mode) + ": at step " + std::to_string(a.atStep) +
                  (a.at.lr > 0 ? " lr " + num(a.at.lr) + " × wd " + num(a.at.intended / a.at.lr) + " = "
                               : " lr × wd = ") + num(a.at.intended) + ", ";
  if (a.updateScale > 0) {
    // Assessed with the Adam updates rounded in, on this run's weights.
    return s + shareText(a.at.vanishedFraction) + " of the bf16 weights keep less than " + shareText(kDecayTolerance) +
           " of their decay (effective " + num(a.at.effective) + " per step on |w|², asked " + num(a.at.intended) +
           ") with Adam updates of " + num(a.updateScale) + " × lr rounded in (pure gradient noise: steadier "
           "gradients move the weights further and keep more); steps off by more than " + shareText(kDecayTolerance) +
           " carry " + shareText(a.shareOff) + " of the run's decay, from step " + std::to_string(a.firstOffStep) +
           " (the update, about lr, must span a bf16 ulp of the weight, |w| × 2^-8 to 2^-7, for its decay to "
           "survive: it depends on lr, not only on lr × wd)";
  }
  s += shareText(a.at.vanishedFraction) + " of the weights never decay";
  if (nearest && a.at.vanishedFraction < 1)
    s += std::string(", the others lose a whole ") + (mode == OptimizerMode::Fp16Plain ? "fp16" : "bf16") + " ulp";
  s += " (effective " + num(a.at.effective) + " per step, asked " + num(a.at.intended) + "); steps off by more than " +
       shareText(kDecayTolerance) + " carry " + shareText(a.shareOff) + " of the run's decay, from step " +
       std::to_string(a.firstOffStep);
  if ((mode == OptimizerMode::Bf16Plain && !torchFused) || mode == OptimizerMode::Fp16Plain)
    s += " (torch rounds the decay step on its own, so gradients do not bring it back)";
  else if (nearest || mode == OptimizerMode::Bf16Kahan)
    s += " (pure-decay steps: weights with zero gradient or Adam updates below an ulp; where the updates span "
         "ulps the decay is rounded with them and mostly survives)";
  else
    s += " (fp32 rounds 1 - lr × wd and the product)";
  return s;
}

nlohmann::json toJson(const DecayAssessment& a) {
  nlohmann::json j = {{"verdict", decayVerdictId(a.verdict)},
                       {"at_step", a.atStep},
                       {"intended", a.at.intended},
                       {"effective", a.at.effective},
                       {"vanished_fraction", a.at.vanishedFraction},
                       {"first_off_step", a.firstOffStep},
                       {"share_off", a.shareOff},
                       {"share_vanished", a.shareVanished},
                       {"run_intended", a.runIntended},
                       {"run_effective", a.runEffective}};
  if (a.at.lr > 0) j["lr"] = a.at.lr;
  if (a.updateScale > 0) j["update_scale"] = a.updateScale;  // assessed with the Adam updates rounded in
  return j;
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
  a.at.lr = number("lr", 0);
  a.updateScale = number("update_scale", 0);
  return a;
}

}  // namespace plab
