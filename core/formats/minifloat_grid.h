#pragma once
// Rounding an fp32 value onto a minifloat's value grid (e4m3, e5m2, e2m1)
// directly: the value torch's cast to the minifloat and back gives
// (e4m3ToFloat(e4m3FromFloat(x)), ...), without the code in between. The
// element functions of the GEMM formats use these; the code conversions in
// fp8_element.h / fp4_element.h stay the reference they are tested against
// (test_formats::gridRoundingIsTheCastAndBack, every rounding pattern).
//
// Each saturates at the format's largest value first, as clampSymmetric
// before the cast does (on the magnitude's bits: an unsigned min, which,
// unlike the clamp's two float selects followed by the rounding, the
// compiler vectorises). Then normal values round their mantissa to nearest,
// ties to even, by integer arithmetic on the bits (a carry moves into the
// exponent); values below the smallest normal land on multiples of the
// smallest subnormal q through (|x| + C) - C with C = q * 2^23, which rounds
// to nearest even in fp32 (round-to-nearest mode, the default everywhere
// this runs; an fp32 subnormal input read as zero under DAZ rounds to 0, as
// it does anyway). Constant shifts and selects only: the loops over
// elements vectorise.
#include <cstdint>

#include "formats/fp8_element.h"

namespace plab::formats {

// A non-negative magnitude (bits; NaN is the caller's) saturated at
// kLargest (bits), then on the grid of kMant mantissa bits whose smallest
// normal is 2^kMinExp.
template <int kMant, int kMinExp, uint32_t kLargest>
PLAB_HD uint32_t roundMagnitudeToGrid(uint32_t unsaturated) {
  const uint32_t magnitude = unsaturated < kLargest ? unsaturated : kLargest;
  constexpr uint32_t kDrop = 23 - kMant;
  const uint32_t normal =
      (magnitude + (1u << (kDrop - 1)) - 1u + ((magnitude >> kDrop) & 1u)) & ~((1u << kDrop) - 1u);
  // C = 2^(kMinExp - kMant + 23): the fp32 ulp at C is the smallest subnormal.
  const float c = floatOf(static_cast<uint32_t>(127 + kMinExp - kMant + 23) << 23);
  const uint32_t subnormal = bitsOf((floatOf(magnitude) + c) - c);
  constexpr uint32_t kSmallestNormal = static_cast<uint32_t>(127 + kMinExp) << 23;
  return selectBits(magnitude < kSmallestNormal, subnormal, normal);
}

// e4m3ToFloat(e4m3FromFloat(clampSymmetric(x, 448))); NaN keeps its sign as
// 0x7FF00000, as that round trip writes it.
PLAB_HD float e4m3Grid(float x) {
  const uint32_t u = bitsOf(x), sign = u & 0x80000000u, magnitude = u & 0x7FFFFFFFu;
  const uint32_t rounded = roundMagnitudeToGrid<3, -6, 0x43E00000u>(magnitude);
  return floatOf(sign | selectBits(magnitude > 0x7F800000u, 0x7FF00000u, rounded));
}

// e5m2ToFloat(e5m2FromFloat(clampSymmetric(x, 57344))); NaN as 0x7FE00000.
PLAB_HD float e5m2Grid(float x) {
  const uint32_t u = bitsOf(x), sign = u & 0x80000000u, magnitude = u & 0x7FFFFFFFu;
  const uint32_t rounded = roundMagnitudeToGrid<2, -14, 0x47600000u>(magnitude);
  return floatOf(sign | selectBits(magnitude > 0x7F800000u, 0x7FE00000u, rounded));
}

// e2m1ToFloat(e2m1FromFloat(clampSymmetric(x, 6))). A NaN stays NaN (the cast
// leaves a finite code there; every format that uses e2m1 has a NaN scale
// for it, so the value is NaN either way: test_formats).
PLAB_HD float e2m1Grid(float x) {
  const uint32_t u = bitsOf(x), sign = u & 0x80000000u, magnitude = u & 0x7FFFFFFFu;
  const uint32_t rounded = roundMagnitudeToGrid<1, 0, 0x40C00000u>(magnitude);
  return floatOf(sign | selectBits(magnitude > 0x7F800000u, 0x7FC00000u, rounded));
}

// One element of torchao's per-tensor fp8 cast and its dequantization:
// x * scale, clamped to the format's range, cast (e4m3Grid, e5m2Grid), then
// divided by `divisor`: the scale (the dequantized value), or 1 (the fp8
// value itself, as an fp8 GEMM takes it; exact).
PLAB_HD float fp8TensorElementE4m3(float x, float scale, float divisor) {
  return e4m3Grid(x * scale) / divisor;
}
PLAB_HD float fp8TensorElementE5m2(float x, float scale, float divisor) {
  return e5m2Grid(x * scale) / divisor;
}

}  // namespace plab::formats
