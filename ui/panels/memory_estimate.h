#pragma once
// Predicted training-state bytes from the module tree alone, so the layer
// tree can show the saving of a plan before any model is built. Same
// per-element rules as plab::predictMemory (which needs torch tensors),
// shared through precision/state_layout.h:
//   fp32 element: weight 4, grad 4, moments 8
//   bf16 element: weight 2, grad 2, moments 4 (pure-bf16 modes with
//                 bf16 moments) or 8, + kahan 2 (Bf16Kahan),
//                 + master 4 (Fp32MasterWeights)
// Fp32AdamW ignores the plan (everything fp32).
#include <map>
#include <string>

#include "precision/memory_breakdown.h"
#include "precision/optimizer_mode.h"
#include "precision/precision_plan.h"

namespace plab::ui {

plab::MemoryBreakdown estimateMemory(const plab::ModuleNode& tree,
                                     const std::map<std::string, plab::LayerPrecision>& resolved,
                                     plab::OptimizerMode mode, const plab::AdamWOptions& options);

}  // namespace plab::ui
