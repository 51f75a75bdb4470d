#pragma once
// The math of one element of torch.optim.AdamW(fused=True)'s CPU step (see
// torch_fused_adamw.h for where each part comes from). Shared by the CPU
// loop's variants; host-device so that a CUDA kernel could call it, though
// torch's own CUDA fused kernel is different code whose arithmetic this does
// not claim. Every operation rounds once: the fused multiply-adds are
// explicit fmaf calls, and the files that compile this use
// -ffp-contract=off so that nothing else is fused.
#include <cmath>

#include "precision/kernels/host_device.h"
#include "precision/kernels/torch_fused_adamw.h"

namespace plab::kernels {

// Steps weight w with gradient g; m and v are updated in place (fp32, not
// yet rounded to the state's dtype) and the new weight is returned in fp32.
// scalarTail: the element is in torch's scalar remainder (its v order);
// lerpSmall: s.lerpSmall, as a constant for the loops.
template <bool ScalarTail, bool LerpSmall>
PLAB_HD float torchFusedAdamwElement(float w, float g, float& m, float& v, const TorchFusedScalars& s) {
  // torch multiplies only with weight decay; without it the factor is
  // exactly 1 and the product the weight itself (no select in the loop).
  w = w * s.decay;
  const float diff = g - m;
  m = LerpSmall ? fmaf(s.lerpWeight, diff, m) : fmaf(s.lerpWeight - 1.0f, diff, g);
  const float scaledGrad = s.oneMinusBeta2 * g;
  v = ScalarTail ? fmaf(v, s.beta2, scaledGrad * g) : fmaf(scaledGrad, g, v * s.beta2);
  const float denom = sqrtf(v) / s.sqrtBiasCorrection2 + s.eps;
  return w + (s.negStepSize * m) / denom;
}

}  // namespace plab::kernels
