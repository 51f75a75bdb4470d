#include "precision/optimizer_mode.h"

#include <cmath>

#include "precision/json_strict.h"
#include "util/errors.h"

namespace plab {

const std::vector<OptimizerMode>& allOptimizerModes() {
  static const std::vector<OptimizerMode> modes = {
      OptimizerMode::Fp32AdamW, OptimizerMode::Bf16Plain, OptimizerMode::Bf16Kahan,
      OptimizerMode::Bf16StochasticRounding, OptimizerMode::Fp32MasterWeights};
  return modes;
}

std::string optimizerModeId(OptimizerMode m) {
  switch (m) {
    case OptimizerMode::Fp32AdamW: return "fp32";
    case OptimizerMode::Bf16Plain: return "bf16";
    case OptimizerMode::Bf16Kahan: return "bf16-kahan";
    case OptimizerMode::Bf16StochasticRounding: return "bf16-sr";
    case OptimizerMode::Fp32MasterWeights: return "mixed";
  }
  return "unknown";
}

std::string optimizerModeLabel(OptimizerMode m) {
  switch (m) {
    case OptimizerMode::Fp32AdamW: return "fp32 AdamW";
    case OptimizerMode::Bf16Plain: return "bf16 AdamW (plain)";
    case OptimizerMode::Bf16Kahan: return "bf16 + Kahan summation";
    case OptimizerMode::Bf16StochasticRounding: return "bf16 + stochastic rounding";
    case OptimizerMode::Fp32MasterWeights: return "fp32 master weights (mixed)";
  }
  return "unknown";
}

OptimizerMode optimizerModeFromId(const std::string& id) {
  std::string valid;
  for (OptimizerMode m : allOptimizerModes()) {
    if (optimizerModeId(m) == id) return m;
    valid += (valid.empty() ? "" : ", ") + optimizerModeId(m);
  }
  throw ConfigError("unknown optimizer mode '" + id + "' (valid: " + valid + ")");
}

nlohmann::json toJson(const AdamWOptions& o) {
  return {{"lr", o.lr},         {"beta1", o.beta1},
          {"beta2", o.beta2},   {"eps", o.eps},
          {"weight_decay", o.weight_decay}, {"bf16_moments", o.bf16_moments}};
}

AdamWOptions adamWOptionsFromJson(const nlohmann::json& j) {
  using namespace json_strict;
  const std::string what = "adamw";
  requireObject(j, what);
  rejectUnknownKeys(j, what, {"lr", "beta1", "beta2", "eps", "weight_decay", "bf16_moments"});
  AdamWOptions o;
  readNumber(j, "lr", what, o.lr);
  readNumber(j, "beta1", what, o.beta1);
  readNumber(j, "beta2", what, o.beta2);
  readNumber(j, "eps", what, o.eps);
  readNumber(j, "weight_decay", what, o.weight_decay);
  readBool(j, "bf16_moments", what, o.bf16_moments);
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

}  // namespace plab
