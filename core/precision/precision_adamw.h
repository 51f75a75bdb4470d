#pragma once
// AdamW for every optimizer recipe: keeps each parameter's state, runs the
// step rule of its recipe (precision/steps/) and measures what of the
// intended update reached the weights the forward pass uses.
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "precision/bf16_rounding.h"
#include "precision/memory_breakdown.h"
#include "precision/optimizer_mode.h"
#include "precision/precision_plan.h"
#include "precision/update_stats.h"

namespace plab {

struct TrainableParam {
  std::string name;   // "transformer.h.0.attn.c_attn.weight"
  std::string layer;  // owning module path "transformer.h.0.attn.c_attn"
  torch::Tensor param;  // the model's parameter (fp32 or bf16), grad() filled by backward
  // Mixed mode only: the fp32 values a bf16 param was rounded from. When set,
  // PrecisionAdamW adopts it as the master copy (no rounding loss at start).
  torch::Tensor fp32Source;
  // The param's position in the model's whole list when this optimizer
  // steps only some of them (a ZeRO shard): its Philox streams are keyed by
  // that position, so stochastic rounding draws the same bits on any number
  // of ranks. -1: its position in this list.
  int64_t streamIndex = -1;
  // When `param` is a flat slice of the parameter (a ZeRO shard): the
  // slice's first element in the whole parameter, a multiple of 8 (one
  // Philox group), so its random bits are those of the same elements of
  // the whole parameter.
  int64_t firstElement = 0;
  // The recipe this bf16 param steps with when the plan gives its layer one
  // (PrecisionPlan::recipes); unset: the run's mode.
  std::optional<OptimizerMode> recipe = std::nullopt;
  // The moment store its layer's plan entry gives (PrecisionPlan::moments),
  // instead of the run's adamw.moments; unset: the run's. It applies as
  // adamw.moments would (state_layout::moments).
  std::optional<MomentPrecision> moments = std::nullopt;
};

class PrecisionAdamW {
 public:
  PrecisionAdamW(std::vector<TrainableParam> params, OptimizerMode mode, AdamWOptions options, uint64_t seed,
                 UpdateStatsOptions stats = {});
  ~PrecisionAdamW();

  // One step at learning rate lr using each param's grad (missing grads are
  // skipped). With collectStats the per-step layer stats are computed; the
  // window stats come at every step that closes a window of
  // UpdateStatsOptions::window steps (when the window is on).
  OptimizerStepStats step(double lr, bool collectStats);
  void zeroGrad();  // releases the gradients (set_to_none)
  int64_t stepCount() const;
  OptimizerMode mode() const;  // the run's; a param's own recipe: recipeOf
  OptimizerMode recipeOf(const TrainableParam& tp) const { return tp.recipe.value_or(mode()); }

  // Bytes held by the optimizer (moments, master, kahan) measured from
  // tensor storage, plus weights and grads of the params it owns.
  MemoryBreakdown measuredMemory() const;
  // Bytes the update-lost windows hold while open (diagnostics, not training state).
  int64_t statisticsBytes() const;

  // Checkpoints: every state tensor by name ("<param>.exp_avg", ".exp_avg_sq",
  // their ".scale" under "8bit" / "4bit" moments, ".master", ".kahan") and the step counts ({"step": n, "params": {name:
  // n}}). The random streams need nothing more: Philox is keyed by the seed
  // and the step. loadState() puts them back
  // into an optimizer built for the same params, mode and options; `tensor`
  // returns a saved tensor by name (undefined when absent). Throws
  // ConfigError on any mismatch.
  std::vector<std::pair<std::string, torch::Tensor>> stateTensors() const;
  nlohmann::json stepCounts() const;
  // What stateTensors() holds, without copying it off the device: checkpoint
  // validation checks a saved file against exactly this set.
  struct StateTensorLayout {
    std::string name;
    torch::ScalarType dtype;
    std::vector<int64_t> shape;
  };
  std::vector<StateTensorLayout> stateLayout() const;
  void loadState(const std::function<torch::Tensor(const std::string&)>& tensor, const nlohmann::json& counts);

  // Introspection (tests, checkpoints): a param's optimizer state by its
  // TrainableParam name; undefined tensors where the mode keeps none.
  // "8bit" / "4bit" moments come back dequantized (fp32, the param's shape), as torchao's dequantize().
  // Throws ConfigError for an unknown name.
  torch::Tensor kahanCompensation(const std::string& paramName) const;
  torch::Tensor masterWeight(const std::string& paramName) const;
  torch::Tensor firstMoment(const std::string& paramName) const;
  torch::Tensor secondMoment(const std::string& paramName) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Converts parameters to the plan's dtype in place (bf16 modules -> bf16;
// in Fp32AdamW mode everything stays fp32) and lists them for the optimizer.
std::vector<TrainableParam> applyPrecisionPlan(torch::nn::Module& model, const PrecisionPlan& plan,
                                               OptimizerMode mode);

// Predicted bytes for the model under plan+mode (and each param's own
// recipe), from shapes alone.
MemoryBreakdown predictMemory(const std::vector<TrainableParam>& params, OptimizerMode mode,
                              const AdamWOptions& options);

// roundToBf16Stochastic / roundToBf16Nearest: see precision/bf16_rounding.h.

}  // namespace plab
