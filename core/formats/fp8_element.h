#pragma once
// fp32 <-> fp8 (e4m3fn, e5m2) for one element, as torch 2.13's
// .to(torch.float8_e4m3fn / float8_e5m2) and back, and torchao's per-tensor
// scale. Torch-free; the same code in the CPU loop and the CUDA kernel
// (formats/quantize_kernels.h). Integer arithmetic only, so the result does
// not depend on the floating-point environment (flush-to-zero, DAZ).
#include <cstdint>

#include "precision/kernels/bf16_bits.h"

namespace plab::formats {

using kernels::bitsOf;
using kernels::floatOf;

constexpr float kE4m3Max = 448.0f;
constexpr float kE5m2Max = 57344.0f;

// c ? a : b as a bit mask, so that both sides are computed (a ternary lets
// the compiler move one side's shifts into a branch, and the loop no longer
// vectorises).
PLAB_HD uint32_t selectBits(bool c, uint32_t a, uint32_t b) {
  const uint32_t mask = 0u - static_cast<uint32_t>(c);
  return (a & mask) | (b & ~mask);
}

// A finite fp32 magnitude (bit pattern, sign cleared) rounded to nearest,
// ties to even, to a minifloat with kMant mantissa bits and exponent bias
// kBias; returns its code without sign. A value that rounds past the largest
// normal carries into the exponent field: the caller decides what overflow
// means. Both cases are computed and one selected (no branches), so that
// loops over elements vectorise.
template <int kMant, int kBias>
PLAB_HD uint32_t roundToMinifloat(uint32_t magnitude) {
  constexpr uint32_t kDrop = 23 - kMant;            // fp32 mantissa bits that go
  constexpr uint32_t kMinNormal = 127 - kBias + 1;  // fp32 exponent field of the smallest normal
  const uint32_t exponent = magnitude >> 23;
  // Normal in the target: rebias the exponent, round the mantissa; a carry
  // moves into the exponent.
  const uint32_t rebased = magnitude - ((127u - kBias) << 23);
  const uint32_t normal = (rebased + (1u << (kDrop - 1)) - 1u + ((rebased >> kDrop) & 1u)) >> kDrop;
  // Below the normal range: the significand in units of the smallest
  // subnormal, 2^(1 - kBias - kMant) (an fp32 subnormal has no implicit bit
  // and the exponent of the smallest normal). A shift of 25 or more leaves
  // less than half a unit (the significand is below 2^24): 0. The shift is
  // kept within [1, 25] also where this case is not selected.
  const uint32_t significand = (magnitude & 0x7FFFFFu) | (exponent != 0 ? 0x800000u : 0u);
  uint32_t shift = kDrop + kMinNormal - (exponent != 0 ? exponent : 1u);
  shift = shift - 1u > 24u ? 25u : shift;
  const uint32_t subnormal = (significand + (1u << (shift - 1u)) - 1u + ((significand >> shift) & 1u)) >> shift;
  return selectBits(exponent >= kMinNormal, normal, subnormal);
}

// torch 2.13's cast saturates: every magnitude from 448 on, +-Inf included,
// becomes +-448 (0x7E; what would round to 480 is 0x7F, NaN, in e4m3fn);
// NaN becomes 0x7F with the input's sign.
PLAB_HD uint8_t e4m3FromFloat(float x) {
  const uint32_t u = bitsOf(x);
  const uint32_t sign = (u >> 24) & 0x80u;
  const uint32_t magnitude = u & 0x7FFFFFFFu;
  const uint32_t rounded = roundToMinifloat<3, 7>(magnitude);
  const uint32_t code = magnitude > 0x7F800000u ? 0x7Fu : (magnitude >= 0x43E00000u ? 0x7Eu : rounded);
  return static_cast<uint8_t>(code | sign);
}

// e5m2 keeps IEEE overflow: values from 61440 (the tie above 57344) round to
// +-Inf (0x7C), as torch's cast does; NaN becomes 0x7F with the input's sign.
PLAB_HD uint8_t e5m2FromFloat(float x) {
  const uint32_t u = bitsOf(x);
  const uint32_t sign = (u >> 24) & 0x80u;
  const uint32_t magnitude = u & 0x7FFFFFFFu;
  const uint32_t rounded = roundToMinifloat<2, 15>(magnitude);
  const uint32_t code = magnitude > 0x7F800000u ? 0x7Fu : (magnitude >= 0x47800000u ? 0x7Cu : rounded);  // 65536, Inf
  return static_cast<uint8_t>(code | sign);
}

// The exact value; NaN codes widen as torch's cast does (e4m3 0x7F ->
// 0x7FF00000; e5m2 NaNs keep their mantissa and become quiet: 0x7D -> 0x7FE00000).
PLAB_HD float e4m3ToFloat(uint8_t code) {
  const uint32_t sign = static_cast<uint32_t>(code & 0x80u) << 24;
  const uint32_t exponent = (code >> 3) & 0xFu, mantissa = code & 0x7u;
  const uint32_t subnormal = bitsOf(static_cast<float>(mantissa) * 0x1p-9f);
  const uint32_t normal = ((exponent + 120u) << 23) | (mantissa << 20);
  const uint32_t magnitude = selectBits(exponent == 0, subnormal, (code & 0x7Fu) == 0x7Fu ? 0x7FF00000u : normal);
  return floatOf(sign | magnitude);
}

PLAB_HD float e5m2ToFloat(uint8_t code) {
  const uint32_t sign = static_cast<uint32_t>(code & 0x80u) << 24;
  const uint32_t exponent = (code >> 2) & 0x1Fu, mantissa = code & 0x3u;
  const uint32_t subnormal = bitsOf(static_cast<float>(mantissa) * 0x1p-16f);
  const uint32_t special = 0x7F800000u | (mantissa != 0 ? 0x400000u | (mantissa << 21) : 0u);  // Inf; NaN quiet
  const uint32_t normal = ((exponent + 112u) << 23) | (mantissa << 21);
  return floatOf(sign | selectBits(exponent == 0, subnormal, exponent == 0x1F ? special : normal));
}

// torch.clamp(x, -bound, bound): NaN passes through, -0 stays -0.
// (Two separate selects: the compiler turns each into a blend and vectorises the loop.)
PLAB_HD float clampSymmetric(float x, float bound) {
  const float low = x < -bound ? -bound : x;
  return low > bound ? bound : low;
}

// torchao's current per-tensor scale (float8_utils.amax_to_scale): in fp64,
// max / max(amax, 1e-12), then rounded to fp32. NaN amax gives a NaN scale.
PLAB_HD float fp8TensorScale(float amax, float formatMax) {
  double a = static_cast<double>(amax);
  a = a < 1e-12 ? 1e-12 : a;
  return static_cast<float>(static_cast<double>(formatMax) / a);
}

}  // namespace plab::formats
