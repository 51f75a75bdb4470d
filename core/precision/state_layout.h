#pragma once
// Which optimizer state a parameter gets under a mode: shared by the
// optimizer (allocation) and the memory predictions (bytes from shapes) so
// that a prediction cannot drift from what is allocated. Torch-free.
#include "precision/optimizer_mode.h"

namespace plab::state_layout {

// The moment precision a parameter really gets: fp32 params and the fp32 and
// mixed modes keep fp32 moments; "bf16" follows torch (state in the param's
// dtype); the other bf16 recipes take the configured choice.
inline MomentPrecision moments(OptimizerMode mode, const AdamWOptions& o, bool paramIsBf16) {
  if (!paramIsBf16 || mode == OptimizerMode::Fp32AdamW || mode == OptimizerMode::Fp32MasterWeights)
    return MomentPrecision::Fp32;
  if (mode == OptimizerMode::Bf16Plain) return MomentPrecision::Bf16Nearest;
  return o.moments == MomentPrecision::ModeDefault ? momentPrecisionDefault(mode) : o.moments;
}

inline bool bf16Moments(OptimizerMode mode, const AdamWOptions& o, bool paramIsBf16) {
  return moments(mode, o, paramIsBf16) != MomentPrecision::Fp32;
}

inline bool hasMaster(OptimizerMode mode, bool paramIsBf16) {
  return paramIsBf16 && mode == OptimizerMode::Fp32MasterWeights;
}

inline bool hasKahan(OptimizerMode mode, bool paramIsBf16) {
  return paramIsBf16 && mode == OptimizerMode::Bf16Kahan;
}

}  // namespace plab::state_layout
