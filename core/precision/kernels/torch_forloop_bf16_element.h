#pragma once
// The math of one element of torch.optim.AdamW's for-loop step on bf16
// tensors (torch_forloop_bf16.h): each of torch's operations computes in
// fp32 from bf16 values and its result is rounded to bf16 (bf16Round), in
// torch's order. Host-device, like the other element functions. Every fp32
// operation rounds once: the fused multiply-adds are explicit fmaf calls (the
// ones ATen's AVX2/AVX-512 build contracts), and the files that compile this
// use -ffp-contract=off so that nothing else is fused.
#include <cmath>
#include <cstdint>

#include "precision/kernels/bf16_bits.h"
#include "precision/kernels/host_device.h"
#include "precision/kernels/torch_forloop_bf16.h"

namespace plab::kernels {

// x rounded to the nearest bf16 (ties to even), as an fp32 value whose low
// 16 bits are zero. No NaN test: a NaN whose low 16 bits are zero stays a
// NaN (the rounding carries nothing out of them), and every NaN this step
// meets is one: NaNs of bf16 inputs, the CPU's default NaN, and no NaN among
// the fp32 scalars (the tensor-op form runs then). +-Inf stays itself, and a
// finite value past bf16's largest rounds to +-Inf, as torch's rounding does.
PLAB_HD float bf16Round(float x) {
  const uint32_t u = bitsOf(x);
  return floatOf((u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u);
}

// The bf16 bits of a bf16Round result.
PLAB_HD uint16_t bf16BitsOf(float rounded) { return static_cast<uint16_t>(bitsOf(rounded) >> 16); }

// Steps weight w (returned, bf16 bits) with gradient g; m and v are bf16
// bits, updated in place. LerpSmall: s.lerpSmall, as a constant for the loops.
template <bool LerpSmall>
PLAB_HD uint16_t torchForloopBf16Element(uint16_t w, uint16_t g, uint16_t& m, uint16_t& v,
                                         const TorchForloopBf16Scalars& s) {
  const float gf = bf16ToFloat(g);
  // param.mul_(1 - lr * wd); without weight decay the factor is exactly 1 and
  // the product the weight itself.
  const float w1 = bf16Round(bf16ToFloat(w) * s.decay);
  // exp_avg.lerp_(grad, 1 - beta1): ATen's lerp, its two forms fused.
  const float m0 = bf16ToFloat(m);
  const float diff = gf - m0;
  const float m1 = bf16Round(LerpSmall ? fmaf(s.lerpWeight, diff, m0) : fmaf(s.lerpWeight - 1.0f, diff, gf));
  // exp_avg_sq.mul_(beta2), then .addcmul_(grad, grad, value=1 - beta2):
  // self + (value * t1) * t2, the last multiply-add fused.
  const float v1 = bf16Round(bf16ToFloat(v) * s.beta2);
  const float v2 = bf16Round(fmaf(s.oneMinusBeta2 * gf, gf, v1));
  // denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps): three
  // tensors, three roundings.
  const float root = bf16Round(sqrtf(v2));
  const float scaled = bf16Round(root / s.sqrtBiasCorrection2);
  const float denom = bf16Round(scaled + s.eps);
  // param.addcdiv_(exp_avg, denom, value=-step_size): self + (value * t1) / t2.
  m = bf16BitsOf(m1);
  v = bf16BitsOf(v2);
  return bf16BitsOf(bf16Round(w1 + (s.negStepSize * m1) / denom));
}

// The statistics' fp32 reference, torch's same operations on fp32 tensors
// (each rounded to fp32 once; lerp and addcmul fused as above): the weight
// after decay (torch skips the product without weight decay, where the
// factor is 1: the same value), m and v, before the square root.
template <bool LerpSmall>
PLAB_HD void torchForloopFp32ReferenceStart(float w, float g, float m, float v, const TorchForloopBf16Scalars& s,
                                            float& wRef, float& mRef, float& vRef) {
  wRef = w * s.decay;
  const float diff = g - m;
  mRef = LerpSmall ? fmaf(s.lerpWeight, diff, m) : fmaf(s.lerpWeight - 1.0f, diff, g);
  vRef = fmaf(s.oneMinusBeta2 * g, g, v * s.beta2);
}

// Its end, from torch's fp32 square root of vRef: the intended weight.
PLAB_HD float torchForloopFp32ReferenceEnd(float wRef, float mRef, float root, const TorchForloopBf16Scalars& s) {
  const float denom = root / s.sqrtBiasCorrection2 + s.eps32;
  return wRef + (s.negStepSize * mRef) / denom;
}

}  // namespace plab::kernels
