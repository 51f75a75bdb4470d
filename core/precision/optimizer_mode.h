#pragma once
// The five optimizer modes and AdamW hyper-parameters. Torch-free.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace plab {

enum class OptimizerMode {
  Fp32AdamW,               // everything fp32 (plan ignored): the reference
  Bf16Plain,               // bf16 params + states, round-to-nearest weight write
  Bf16Kahan,               // bf16 params + bf16 Kahan compensation buffer
  Bf16StochasticRounding,  // bf16 params, stochastically rounded weight write
  Fp32MasterWeights,       // fp32 master copy in the optimizer, bf16 compute params
};

const std::vector<OptimizerMode>& allOptimizerModes();
std::string optimizerModeId(OptimizerMode m);     // "fp32", "bf16", "bf16-kahan", "bf16-sr", "mixed"
std::string optimizerModeLabel(OptimizerMode m);  // "fp32 AdamW", "bf16 AdamW", "bf16 + Kahan", ...
OptimizerMode optimizerModeFromId(const std::string& id);  // throws ConfigError listing valid ids

struct AdamWOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.01;
  // Moments of bf16 layers stored in bf16 (true) or fp32 (false). In
  // Bf16Plain mode states follow the params (bf16) unless this is false.
  bool bf16_moments = true;
};

nlohmann::json toJson(const AdamWOptions& o);
AdamWOptions adamWOptionsFromJson(const nlohmann::json& j);  // throws ConfigError

}  // namespace plab
