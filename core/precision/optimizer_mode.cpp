#include "precision/optimizer_mode.h"

#include <cmath>

#include "precision/decay_effect.h"
#include "precision/json_strict.h"
#include "util/errors.h"

namespace plab {

const std::vector<OptimizerMode>& allOptimizerModes() {
  static const std::vector<OptimizerMode> modes = {
      OptimizerMode::Fp32AdamW,  OptimizerMode::Bf16Plain,
      OptimizerMode::Bf16Nearest, OptimizerMode::Bf16Kahan,
      OptimizerMode::Bf16StochasticRounding, OptimizerMode::Fp32MasterWeights};
  return modes;
}

const std::vector<OptimizerMode>& fp16OptimizerModes() {
  static const std::vector<OptimizerMode> modes = {OptimizerMode::Fp16Plain, OptimizerMode::Fp16Mixed};
  return modes;
}

const std::vector<OptimizerMode>& everyOptimizerMode() {
  static const std::vector<OptimizerMode> modes = [] {
    std::vector<OptimizerMode> v = allOptimizerModes();
    v.insert(v.end(), fp16OptimizerModes().begin(), fp16OptimizerModes().end());
    return v;
  }();
  return modes;
}

bool modeUsesFp16(OptimizerMode m) { return m == OptimizerMode::Fp16Plain || m == OptimizerMode::Fp16Mixed; }

bool modeIsLayerRecipe(OptimizerMode m) { return m != OptimizerMode::Fp32AdamW && !modeUsesFp16(m); }

bool modeScalesLoss(OptimizerMode m) { return m == OptimizerMode::Fp16Mixed; }

std::string optimizerModeId(OptimizerMode m) {
  switch (m) {
    case OptimizerMode::Fp32AdamW: return "fp32";
    case OptimizerMode::Bf16Plain: return "bf16";
    case OptimizerMode::Bf16Nearest: return "bf16-nearest";
    case OptimizerMode::Bf16Kahan: return "bf16-kahan";
    case OptimizerMode::Bf16StochasticRounding: return "bf16-sr";
    case OptimizerMode::Fp32MasterWeights: return "mixed";
    case OptimizerMode::Fp16Plain: return "fp16";
    case OptimizerMode::Fp16Mixed: return "fp16-mixed";
  }
  return "unknown";
}

std::string optimizerModeLabel(OptimizerMode m) {
  switch (m) {
    case OptimizerMode::Fp32AdamW: return "fp32 AdamW";
    case OptimizerMode::Bf16Plain: return "bf16 AdamW (plain, as torch)";
    case OptimizerMode::Bf16Nearest: return "bf16, fp32 math, nearest write";
    case OptimizerMode::Bf16Kahan: return "bf16 + Kahan summation";
    case OptimizerMode::Bf16StochasticRounding: return "bf16 + stochastic rounding";
    case OptimizerMode::Fp32MasterWeights: return "fp32 master weights (mixed)";
    case OptimizerMode::Fp16Plain: return "fp16 AdamW (plain, as torch)";
    case OptimizerMode::Fp16Mixed: return "fp16 + fp32 master + loss scaling";
  }
  return "unknown";
}

std::string optimizerModeSummary(OptimizerMode m) {
  switch (m) {
    case OptimizerMode::Fp32AdamW:
      return "Every parameter and moment in fp32; bit-identical to torch::optim::AdamW. The reference.";
    case OptimizerMode::Bf16Plain:
      return "What model.to(torch.bfloat16) + torch.optim.AdamW does: bf16 weights and moments, every "
             "operation rounded to bf16; bit-identical to torch::optim::AdamW on bf16 parameters.";
    case OptimizerMode::Bf16Nearest:
      return "bf16 weights; the AdamW update (decay included) is computed in fp32 and written once with "
             "round-to-nearest. The control for Kahan and stochastic rounding: same math, plain write.";
    case OptimizerMode::Bf16Kahan:
      return "bf16 weights plus a bf16 compensation buffer: the fp32 update (decay included) is Kahan-summed "
             "into the weight, so what a write loses is carried to the next step. Like optimi's "
             "kahan_sum=True, but not identical: optimi computes in bf16 and decays the bf16 weight outside "
             "the compensated sum, so its weight decay vanishes at small lr.";
    case OptimizerMode::Bf16StochasticRounding:
      return "bf16 weights; the fp32 update is written with stochastic rounding (unbiased: rounds up with "
             "probability equal to the distance from the lower bf16 value), seeded per run.";
    case OptimizerMode::Fp32MasterWeights:
      return "fp32 master weights and moments in the optimizer; the model computes with a bf16 copy rounded "
             "to nearest from the master after each step.";
    case OptimizerMode::Fp16Plain:
      return "What model.half() + torch.optim.AdamW does: fp16 weights and moments, every operation rounded "
             "to fp16, no loss scaling; bit-identical to torch.optim.AdamW on fp16 parameters.";
    case OptimizerMode::Fp16Mixed:
      return "fp16 compute weights, fp32 master weights and moments in the optimizer, and dynamic loss scaling "
             "as torch.amp.GradScaler (2^16, x2 every 2000 clean steps, x0.5 and the step skipped on Inf/NaN).";
  }
  return "";
}

OptimizerMode optimizerModeFromId(const std::string& id) {
  std::string valid;
  for (OptimizerMode m : everyOptimizerMode()) {
    if (optimizerModeId(m) == id) return m;
    valid += (valid.empty() ? "" : ", ") + optimizerModeId(m);
  }
  throw ConfigError("unknown optimizer mode '" + id + "' (valid: " + valid + ")");
}

const std::vector<MomentPrecision>& allMomentPrecisions() {
  static const std::vector<MomentPrecision> all = {MomentPrecision::ModeDefault, MomentPrecision::Fp32,
                                                   MomentPrecision::Bf16Nearest, MomentPrecision::Bf16Stochastic,
                                                   MomentPrecision::Dynamic8bit, MomentPrecision::Dynamic4bit,
                                                   MomentPrecision::Fp8};
  return all;
}

std::string momentPrecisionId(MomentPrecision p) {
  switch (p) {
    case MomentPrecision::ModeDefault: return "default";
    case MomentPrecision::Fp32: return "fp32";
    case MomentPrecision::Bf16Nearest: return "bf16";
    case MomentPrecision::Bf16Stochastic: return "bf16-sr";
    case MomentPrecision::Fp16: return "fp16";
    case MomentPrecision::Dynamic8bit: return "8bit";
    case MomentPrecision::Dynamic4bit: return "4bit";
    case MomentPrecision::Fp8: return "fp8";
  }
  return "unknown";
}

MomentPrecision momentPrecisionFromId(const std::string& id) {
  std::string valid;
  for (MomentPrecision p : allMomentPrecisions()) {
    if (momentPrecisionId(p) == id) return p;
    valid += (valid.empty() ? "" : ", ") + momentPrecisionId(p);
  }
  throw ConfigError("adamw.moments: unknown value '" + id + "' (valid: " + valid + ")");
}

bool modeHasMomentChoice(OptimizerMode m) {
  return m == OptimizerMode::Bf16Nearest || m == OptimizerMode::Bf16Kahan ||
         m == OptimizerMode::Bf16StochasticRounding;
}

bool momentsQuantized(MomentPrecision p) {
  return p == MomentPrecision::Dynamic8bit || p == MomentPrecision::Dynamic4bit || p == MomentPrecision::Fp8;
}

MomentPrecision momentPrecisionDefault(OptimizerMode m) {
  switch (m) {
    case OptimizerMode::Bf16Plain: return MomentPrecision::Bf16Nearest;
    // The nearest-write control keeps the plain recipe's state so that only
    // the arithmetic of the update differs from "bf16".
    case OptimizerMode::Bf16Nearest: return MomentPrecision::Bf16Nearest;
    // Stochastically rounded bf16 moments decay like fp32 moments on average
    // at half their bytes (test_moment_precision measures the three choices).
    case OptimizerMode::Bf16Kahan:
    case OptimizerMode::Bf16StochasticRounding: return MomentPrecision::Bf16Stochastic;
    // torch's state follows the parameter's dtype.
    case OptimizerMode::Fp16Plain: return MomentPrecision::Fp16;
    case OptimizerMode::Fp32AdamW:
    case OptimizerMode::Fp32MasterWeights:
    case OptimizerMode::Fp16Mixed: return MomentPrecision::Fp32;
  }
  return MomentPrecision::Fp32;
}

std::string stepKernelsId(StepKernels k) { return k == StepKernels::Fused ? "fused" : "reference"; }

std::string torchStepId(TorchStep t) {
  switch (t) {
    case TorchStep::ModeDefault: return "default";
    case TorchStep::Fused: return "fused";
    case TorchStep::ForLoop: return "for-loop";
  }
  return "default";
}

TorchStep torchStepFromId(const std::string& id) {
  if (id == "default") return TorchStep::ModeDefault;
  if (id == "fused") return TorchStep::Fused;
  if (id == "for-loop") return TorchStep::ForLoop;
  throw ConfigError("adamw.torch_step: unknown value '" + id + "' (valid: default, fused, for-loop)");
}

bool torchStepFused(TorchStep t, bool bf16Weights) {
  return t == TorchStep::Fused || (t == TorchStep::ModeDefault && !bf16Weights);
}

StepKernels stepKernelsFromId(const std::string& id) {
  if (id == "fused") return StepKernels::Fused;
  if (id == "reference") return StepKernels::Reference;
  throw ConfigError("adamw.kernels: unknown value '" + id + "' (valid: fused, reference)");
}

nlohmann::json toJson(const AdamWOptions& o) {
  return {{"lr", o.lr},   {"beta1", o.beta1},
          {"beta2", o.beta2}, {"eps", o.eps},
          {"weight_decay", o.weight_decay}, {"moments", momentPrecisionId(o.moments)},
          {"kernels", stepKernelsId(o.kernels)}, {"torch_step", torchStepId(o.torchStep)}};
}

AdamWOptions adamWOptionsFromJson(const nlohmann::json& j) {
  using namespace json_strict;
  const std::string what = "adamw";
  requireObject(j, what);
  rejectUnknownKeys(j, what, {"lr", "beta1", "beta2", "eps", "weight_decay", "moments", "bf16_moments", "kernels",
                                 "torch_step"});
  AdamWOptions o;
  readNumber(j, "lr", what, o.lr);
  readNumber(j, "beta1", what, o.beta1);
  readNumber(j, "beta2", what, o.beta2);
  readNumber(j, "eps", what, o.eps);
  readNumber(j, "weight_decay", what, o.weight_decay);
  if (j.contains("moments") && j.contains("bf16_moments"))
    throw ConfigError("adamw: give either 'moments' or the older 'bf16_moments', not both");
  if (j.contains("bf16_moments")) {
    bool bf16 = true;
    readBool(j, "bf16_moments", what, bf16);
    o.moments = bf16 ? MomentPrecision::Bf16Nearest : MomentPrecision::Fp32;
  }
  std::string moments = momentPrecisionId(o.moments);
  readString(j, "moments", what, moments);
  o.moments = momentPrecisionFromId(moments);
  std::string kernels = stepKernelsId(o.kernels);
  readString(j, "kernels", what, kernels);
  o.kernels = stepKernelsFromId(kernels);
  // Absent in configs written before the fused form existed: they get the
  // default (their runs used the for-loop form; see run_folder_reader.cpp).
  std::string torchStep = torchStepId(o.torchStep);
  readString(j, "torch_step", what, torchStep);
  o.torchStep = torchStepFromId(torchStep);
  // Values outside these ranges make AdamW diverge or divide by zero.
  auto require = [&](bool ok, const char* key, const char* rule) {
    if (!ok) throw ConfigError(what + "." + key + ": must be " + rule);
  };
  require(std::isfinite(o.lr) && o.lr >= 0, "lr", ">= 0");
  require(o.beta1 >= 0 && o.beta1 < 1, "beta1", "in [0, 1)");
  require(o.beta2 >= 0 && o.beta2 < 1, "beta2", "in [0, 1)");
  require(std::isfinite(o.eps) && o.eps > 0, "eps", "> 0");
  require(std::isfinite(o.weight_decay) && o.weight_decay >= 0, "weight_decay", ">= 0");
  return o;
}

bool weightDecayRoundedAway(OptimizerMode mode, const AdamWOptions& o) {
  const double x = o.lr * o.weight_decay;
  return x > 0 && decayStepEffect(mode, x).effective < kDecayTolerance * x;
}

}  // namespace plab
