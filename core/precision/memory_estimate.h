#pragma once
// Predicted training-state bytes from the module tree alone, so that a plan's
// saving shows before any model is built and a 70 B model can be projected
// without allocating it. Same per-element rules as plab::predictMemory (which
// needs torch tensors), shared through precision/state_layout.h:
//   fp32 element: weight 4, grad 4, moments 8
//   bf16 element: weight 2, grad 2, moments 4 (pure-bf16 modes with
//                 bf16 moments) or 8, + kahan 2 (Bf16Kahan),
//                 + master 4 (Fp32MasterWeights)
//   fp16 modes: a bf16 layer holds fp16 (2 bytes like bf16); "fp16" keeps
//                 fp16 moments (4), "fp16-mixed" fp32 moments (8), master 4
//                 and its gradients unscaled in fp32 (4)
//   "8bit" moments: 1 byte per element per moment plus (scales) an fp32
//                 scale per 256 when the tensor is quantized (>= 4096 elements, a
//                 multiple of 256), else the parameter's dtype; exact per
//                 tensor (predictMemory), applied to a module's parameters
//                 together in the module-tree estimate (an estimate: a
//                 module's small bias is counted with its weight there)
// Fp32AdamW ignores the plan (everything fp32). Torch-free.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "precision/memory_breakdown.h"
#include "precision/optimizer_mode.h"
#include "precision/precision_plan.h"

namespace plab {

// The parameters a module owns directly, as the optimizer will hold them.
struct ParameterGroup {
  std::string path;
  int64_t elements = 0;
  bool bf16 = false;  // after the mode (fp32 AdamW keeps everything fp32)
  OptimizerMode mode = OptimizerMode::Fp32AdamW;  // the recipe its bf16 elements step with
  // The plan's moment store for the module (PrecisionPlan::resolveMoments);
  // unset: the run's adamw.moments.
  std::optional<MomentPrecision> moments = std::nullopt;
};

// Every module that owns parameters, in the model's parameter order.
// `recipes` (PrecisionPlan::resolveRecipes) gives a bf16 module its own
// recipe; a module it does not name steps with `mode`. `moments`
// (PrecisionPlan::resolveMoments) gives a module its own moment store.
std::vector<ParameterGroup> parameterGroups(const ModuleNode& tree,
                                            const std::map<std::string, LayerPrecision>& resolved, OptimizerMode mode,
                                            const std::map<std::string, OptimizerMode>& recipes = {},
                                            const std::map<std::string, MomentPrecision>& moments = {});

// The bytes `elements` parameters of one group add (weights, gradients and state).
MemoryBreakdown elementBytes(int64_t elements, bool bf16, OptimizerMode mode, const AdamWOptions& options);

MemoryBreakdown estimateMemory(const ModuleNode& tree, const std::map<std::string, LayerPrecision>& resolved,
                               OptimizerMode mode, const AdamWOptions& options,
                               const std::map<std::string, OptimizerMode>& recipes = {},
                               const std::map<std::string, MomentPrecision>& moments = {});

// The same from a plan: its precision and, under a bf16 mode, its recipes and moment stores.
MemoryBreakdown estimateMemory(const ModuleNode& tree, const PrecisionPlan& plan, OptimizerMode mode,
                               const AdamWOptions& options);

}  // namespace plab
