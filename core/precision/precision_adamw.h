#pragma once
// AdamW with decoupled weight decay for all five optimizer modes, one
// implementation. fp32 params follow torch::optim::AdamW's arithmetic
// exactly; bf16 params compute the update in fp32 and then write it with
// the mode's rounding (nearest, Kahan-compensated, or stochastic).
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "precision/bf16_rounding.h"
#include "precision/memory_breakdown.h"
#include "precision/optimizer_mode.h"
#include "precision/precision_plan.h"

namespace plab {

struct TrainableParam {
  std::string name;   // "transformer.h.0.attn.c_attn.weight"
  std::string layer;  // owning module path "transformer.h.0.attn.c_attn"
  torch::Tensor param;  // the model's parameter (fp32 or bf16), grad() filled by backward
  // Mixed mode only: the fp32 values a bf16 param was rounded from. When set,
  // PrecisionAdamW adopts it as the master copy (no rounding loss at start).
  torch::Tensor fp32Source;
};

// Per-layer outcome of one step. "Rounded away": the intended update of an
// element was non-zero but its stored weight did not change.
struct LayerUpdateStats {
  std::string layer;
  int64_t numel = 0;
  int64_t intendedNonZero = 0;
  int64_t roundedAway = 0;
  double intendedNormSq = 0;   // ||intended update||^2 (fp32 math)
  double effectiveNormSq = 0;  // ||stored_after - stored_before||^2
};

class PrecisionAdamW {
 public:
  PrecisionAdamW(std::vector<TrainableParam> params, OptimizerMode mode, AdamWOptions options,
                 uint64_t seed);
  ~PrecisionAdamW();

  // One step at learning rate lr using each param's grad (missing grads are
  // skipped). With collectStats the per-layer stats are computed (extra cost).
  std::vector<LayerUpdateStats> step(double lr, bool collectStats);
  void zeroGrad();
  int64_t stepCount() const;
  OptimizerMode mode() const;

  // Bytes held by the optimizer (moments, master, kahan) measured from
  // tensor storage, plus weights and grads of the params it owns.
  MemoryBreakdown measuredMemory() const;

  // Introspection (tests, checkpoints): a param's optimizer state by its
  // TrainableParam name; undefined tensors where the mode keeps none.
  // Throws ConfigError for an unknown name.
  torch::Tensor kahanCompensation(const std::string& paramName) const;
  torch::Tensor masterWeight(const std::string& paramName) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Converts parameters to the plan's dtype in place (bf16 modules -> bf16;
// in Fp32AdamW mode everything stays fp32) and lists them for the optimizer.
std::vector<TrainableParam> applyPrecisionPlan(torch::nn::Module& model, const PrecisionPlan& plan,
                                               OptimizerMode mode);

// Predicted bytes for the model under plan+mode, from shapes alone.
MemoryBreakdown predictMemory(const std::vector<TrainableParam>& params, OptimizerMode mode,
                              const AdamWOptions& options);

// roundToBf16Stochastic / roundToBf16Nearest: see precision/bf16_rounding.h.

}  // namespace plab
