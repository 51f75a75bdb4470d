#pragma once
// What each bf16 write would lose, measured in shadow during an fp32 run.
//
// On an evenly strided sample of every fp32 parameter's elements (the
// stride UpdateWindow uses), three shadow bf16 copies start at bf16(w0) and
// receive each step's intended fp32 update (w_after - w_before of the real
// run): one written by round-to-nearest, one by stochastic rounding (its own
// Philox stream, not the optimizer's), one by the Kahan-compensated write
// with a bf16 buffer. Over each window of K steps the terms of "update lost"
// (precision/update_stats.h: A, P, S and the groups of the standard error)
// are accumulated exactly as the optimizer accumulates them, so the figures
// read like a real run's update lost. The shadows follow the fp32
// trajectory, not their own: they answer "what would this write lose of
// these updates", not "where would this recipe have trained to".
//
// All sampled elements of all parameters are laid end to end in one flat
// vector, so a step costs a few dozen tensor ops whatever the layer count.
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "precision/precision_adamw.h"

namespace plab {

// Elements tracked per tensor: the cost of a step is about 40 passes over them.
constexpr int64_t kShadowMaxTrackedPerTensor = 1 << 12;

class ShadowRecipes {
 public:
  // Only fp32 parameters are shadowed (bf16 ones already store bf16).
  ShadowRecipes(const std::vector<TrainableParam>& params, int64_t window, uint64_t seed,
                int64_t maxTrackedPerTensor = kShadowMaxTrackedPerTensor);
  // Around each optimizer step that updates the weights.
  void beforeStep();
  // Null, or on a step that closes a window one entry per layer:
  // {"layer", "elements", "update_lost": {"nearest", "stochastic", "kahan"},
  //  "update_lost_se": {...}, "below_half_ulp"}.
  nlohmann::json afterStep();
  bool empty() const { return views_.empty(); }

 private:
  torch::Tensor gather() const;
  torch::Tensor recipeTerms(const torch::Tensor& weights, const torch::Tensor& start, const torch::Tensor& pending,
                            bool stochastic) const;
  std::vector<torch::Tensor> views_;  // flat strided views of the parameters' tracked elements
  std::vector<std::string> layers_;
  torch::Tensor termIndex_;   // per element: layer * kLostGroups + group (int64)
  torch::Tensor layerIndex_;  // per element: layer (int64)
  torch::Tensor elementsPerLayer_;  // fp64 [layers]
  int64_t window_ = 20;
  uint64_t seed_ = 0;
  int64_t steps_ = 0;
  torch::Tensor before_;                       // fp32, the real weights before the step
  torch::Tensor nearest_, stochastic_, kahan_, buffer_;  // fp32 holding bf16 values
  torch::Tensor nearestStart_, stochasticStart_, kahanStart_, bufferStart_;
  torch::Tensor intendedSum_;                  // fp64
  torch::Tensor nonZero_, belowHalfUlp_;        // fp64 [layers], counts over the window's steps
};

}  // namespace plab
