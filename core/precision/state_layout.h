#pragma once
// Which optimizer state a parameter gets under a mode: shared by the
// optimizer (allocation) and predictMemory (bytes from shapes) so that the
// prediction cannot drift from what is allocated. Torch-free.
#include "precision/optimizer_mode.h"

namespace plab::state_layout {

// Moments follow a bf16 param only in the pure-bf16 modes; fp32 and mixed
// always keep fp32 moments.
inline bool bf16Moments(OptimizerMode mode, const AdamWOptions& o, bool paramIsBf16) {
  const bool pureBf16Mode = mode == OptimizerMode::Bf16Plain || mode == OptimizerMode::Bf16Kahan ||
                            mode == OptimizerMode::Bf16StochasticRounding;
  return paramIsBf16 && pureBf16Mode && o.bf16_moments;
}

inline bool hasMaster(OptimizerMode mode, bool paramIsBf16) {
  return paramIsBf16 && mode == OptimizerMode::Fp32MasterWeights;
}

inline bool hasKahan(OptimizerMode mode, bool paramIsBf16) {
  return paramIsBf16 && mode == OptimizerMode::Bf16Kahan;
}

}  // namespace plab::state_layout
