#pragma once
// Which optimizer state a parameter gets under a mode: shared by the
// optimizer (allocation) and the memory predictions (bytes from shapes) so
// that a prediction cannot drift from what is allocated. Torch-free.
//
// "Low precision" (paramIsBf16 below, the name older than the fp16 modes) is
// a plan's bf16 layer: it holds bf16, or fp16 under the fp16 modes; both
// take 2 bytes per element.
#include <optional>

#include "precision/kernels/dynamic_tree_4bit.h"
#include "precision/kernels/dynamic_tree_8bit.h"
#include "precision/optimizer_mode.h"

namespace plab::state_layout {

// The options a layer's parameters step with: the run's, with the plan's
// per-layer moment store (PrecisionPlan::moments) in place of adamw.moments
// where one reaches the layer. Every rule below then reads it as it reads
// the run-wide setting, so per-layer and run-wide stores cannot diverge.
inline AdamWOptions withStore(const AdamWOptions& o, const std::optional<MomentPrecision>& store) {
  AdamWOptions out = o;
  if (store) out.moments = *store;
  return out;
}

// The moment precision a parameter really gets: fp32 params and the fp32,
// mixed and fp16-mixed modes keep fp32 moments; "bf16" and "fp16" follow
// torch (state in the param's dtype); the other bf16 recipes take the
// configured choice.
inline MomentPrecision moments(OptimizerMode mode, const AdamWOptions& o, bool paramIsBf16) {
  // torchao's AdamW8bit quantizes the moments of every parameter it steps,
  // fp32 ones too: so does "8bit" in the recipes that offer the choice.
  if (momentsQuantized(o.moments) && modeHasMomentChoice(mode)) return o.moments;
  if (!paramIsBf16 || mode == OptimizerMode::Fp32AdamW || mode == OptimizerMode::Fp32MasterWeights ||
      mode == OptimizerMode::Fp16Mixed)
    return MomentPrecision::Fp32;
  if (mode == OptimizerMode::Bf16Plain) return MomentPrecision::Bf16Nearest;
  if (mode == OptimizerMode::Fp16Plain) return MomentPrecision::Fp16;
  return o.moments == MomentPrecision::ModeDefault ? momentPrecisionDefault(mode) : o.moments;
}

// Whether the moments take 2 bytes per element (bf16 or fp16).
inline bool bf16Moments(OptimizerMode mode, const AdamWOptions& o, bool paramIsBf16) {
  const MomentPrecision p = moments(mode, o, paramIsBf16);
  return p != MomentPrecision::Fp32 && !momentsQuantized(p);
}

// Bytes of m and v together for a tensor of n elements: "8bit" as torchao
// allocates them (kernels/dynamic_tree_8bit.h: one byte per element for
// each moment when the tensor is quantized, else the parameter's own
// dtype), "fp8" likewise (an e4m3 byte, the same blocks and rule), "4bit"
// with half a byte (kernels/dynamic_tree_4bit.h), the others 2 or 4 bytes per element each. The quantized moments'
// scales are scaleBytes.
inline int64_t momentBytes(int64_t n, OptimizerMode mode, const AdamWOptions& o, bool paramIsBf16) {
  const MomentPrecision p = moments(mode, o, paramIsBf16);
  if ((p == MomentPrecision::Dynamic8bit || p == MomentPrecision::Fp8) && kernels::dynamicTreeQuantizes(n)) return 2 * n;
  if (p == MomentPrecision::Dynamic4bit && kernels::dynamicTree4Quantizes(n)) return n;  // two codes per byte
  if (momentsQuantized(p)) return 2 * n * (paramIsBf16 ? 2 : 4);
  return 2 * n * (bf16Moments(mode, o, paramIsBf16) ? 2 : 4);
}

// Bytes of the quantized moments' scales (m and v together): an fp32 scale
// per block of each moment where the tensor is quantized, else 0.
inline int64_t scaleBytes(int64_t n, OptimizerMode mode, const AdamWOptions& o, bool paramIsBf16) {
  const MomentPrecision p = moments(mode, o, paramIsBf16);
  if ((p == MomentPrecision::Dynamic8bit || p == MomentPrecision::Fp8) && kernels::dynamicTreeQuantizes(n))
    return 2 * 4 * (n / kernels::kDynamicTreeBlock);
  if (p == MomentPrecision::Dynamic4bit && kernels::dynamicTree4Quantizes(n)) return 2 * 4 * (n / kernels::kDynamicTree4Block);
  return 0;
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
