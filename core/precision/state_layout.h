#pragma once
// Which optimizer state a parameter gets under a mode: shared by the
// optimizer (allocation) and the memory predictions (bytes from shapes) so
// that a prediction cannot drift from what is allocated. Torch-free.
//
// "Low precision" (paramIsBf16 below, the name older than the fp16 modes) is
// a plan's bf16 layer: it holds bf16, or fp16 under the fp16 modes; both
// take 2 bytes per element.
#include "precision/optimizer_mode.h"

namespace plab::state_layout {

// The moment precision a parameter really gets: fp32 params and the fp32,
// mixed and fp16-mixed modes keep fp32 moments; "bf16" and "fp16" follow
// torch (state in the param's dtype); the other bf16 recipes take the
// configured choice.
inline MomentPrecision moments(OptimizerMode mode, const AdamWOptions& o, bool paramIsBf16) {
  if (!paramIsBf16 || mode == OptimizerMode::Fp32AdamW || mode == OptimizerMode::Fp32MasterWeights ||
      mode == OptimizerMode::Fp16Mixed)
    return MomentPrecision::Fp32;
  if (mode == OptimizerMode::Bf16Plain) return MomentPrecision::Bf16Nearest;
  if (mode == OptimizerMode::Fp16Plain) return MomentPrecision::Fp16;
  return o.moments == MomentPrecision::ModeDefault ? momentPrecisionDefault(mode) : o.moments;
}

// Whether the moments take 2 bytes per element (bf16 or fp16).
inline bool bf16Moments(OptimizerMode mode, const AdamWOptions& o, bool paramIsBf16) {
  return moments(mode, o, paramIsBf16) != MomentPrecision::Fp32;
}

inline bool hasMaster(OptimizerMode mode, bool paramIsBf16) {
  return paramIsBf16 && (mode == OptimizerMode::Fp32MasterWeights || mode == OptimizerMode::Fp16Mixed);
}

inline bool hasKahan(OptimizerMode mode, bool paramIsBf16) {
  return paramIsBf16 && mode == OptimizerMode::Bf16Kahan;
}

// fp16-mixed hands the optimizer its gradients unscaled in fp32 (what
// GradScaler unscales; an fp16 copy would flush the small ones the scale
// saved): 4 bytes per element where the param holds 2.
inline bool fp32Gradients(OptimizerMode mode, bool paramIsBf16) {
  return paramIsBf16 && mode == OptimizerMode::Fp16Mixed;
}

}  // namespace plab::state_layout
