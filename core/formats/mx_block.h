#pragma once
// One block of the OCP MX formats (MXFP8: e4m3 elements, MXFP4: e2m1
// elements; 32 elements share one E8M0 scale, a power of two) as torchao's
// reference computes it (prototype/mx_formats/mx_tensor.py: to_mx with
// ScaleCalculationMode.FLOOR, the default of to_mx and MXTensor, then
// to_dtype). Torch-free; the same code in the CPU loop and the CUDA kernel.
#include <cstdint>

#include "formats/fp4_element.h"
#include "formats/fp8_element.h"
#include "formats/minifloat_grid.h"

namespace plab::formats {

constexpr int kMxBlock = 32;

// The largest power of two of each element type, log2: e4m3 256, e2m1 4.
constexpr int kE4m3MaxPow2 = 8;
constexpr int kE2m1MaxPow2 = 2;

// FLOOR (the OCP MX spec's rule): X = 2^(floor(log2 amax) - emax), read off
// amax's fp32 exponent field, clamped to E8M0's range, biased by 127.
// amax is the block's largest magnitude; NaN (any element NaN) gives 255,
// E8M0's NaN. A zero or fp32-subnormal amax gives code 0.
PLAB_HD uint8_t mxScaleFloor(float amax, int elementMaxPow2) {
  const uint32_t bits = bitsOf(amax) & 0x7FFFFFFFu;
  if (bits > 0x7F800000u) return 255;
  int unbiased = static_cast<int>(bits >> 23) - 127 - elementMaxPow2;
  unbiased = unbiased < -127 ? -127 : (unbiased > 128 ? 128 : unbiased);
  return static_cast<uint8_t>(unbiased + 127);
}

// What the elements are divided by when quantizing: 2^(code - 127), with
// torchao's floor at the smallest fp32 normal 2^-126 for code 0; code 255 is +Inf.
PLAB_HD float mxDivisor(uint8_t code) { return code == 0 ? 0x1p-126f : floatOf(static_cast<uint32_t>(code) << 23); }

// What the elements are multiplied by when dequantizing (torchao's
// get_fp_scale): 2^(code - 127), code 0 the subnormal 2^-127 (not the
// quantizer's 2^-126: such a block comes back at half its value, as in
// torchao); code 255 NaN.
PLAB_HD float mxMultiplier(uint8_t code) {
  if (code == 255) return floatOf(0x7FC00000u);
  return code == 0 ? floatOf(0x00400000u) : floatOf(static_cast<uint32_t>(code) << 23);
}

// One element quantized and dequantized. e4m3: x / divisor clamped to +-448
// (torchao clamps before the cast), e2m1: the cast saturates by itself.
PLAB_HD float mxfp8Element(float x, float divisor, float multiplier) {
  return e4m3Grid(x / divisor) * multiplier;
}
PLAB_HD float mxfp4Element(float x, float divisor, float multiplier) {
  return e2m1Grid(x / divisor) * multiplier;
}

}  // namespace plab::formats
