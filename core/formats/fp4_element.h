#pragma once
// fp32 <-> e2m1 (fp4: values 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives)
// for one element, as torchao's reference cast (prototype/custom_fp_utils.py,
// _f32_to_floatx_unpacked with ebits 2, mbits 1; f4_unpacked_to_f32). e2m1
// has no Inf or NaN: magnitudes from 6 and +-Inf saturate to +-6. A NaN goes
// through torchao's normal-range arithmetic on its bits and leaves a finite
// code (1, 1.5 or 2 with the NaN's sign); the scales of every format that
// uses e2m1 are NaN then, so the dequantized value is NaN all the same.
// Torch-free; the same code in the CPU loop and the CUDA kernel.
#include <cstdint>

#include "formats/fp8_element.h"

namespace plab::formats {

constexpr float kE2m1Max = 6.0f;

// Round to nearest, ties to even.
PLAB_HD uint8_t e2m1FromFloat(float x) {
  const uint32_t u = bitsOf(x);
  const uint32_t sign = (u >> 28) & 0x8u;
  const uint32_t magnitude = u & 0x7FFFFFFFu;
  // NaN: torchao's uint8 of the normal-range arithmetic on its bits (2 .. 4).
  const uint32_t rounded = roundToMinifloat<1, 1>(magnitude) & 0xFu;
  const uint32_t code = magnitude > 0x7F800000u ? rounded : (magnitude >= 0x40C00000u ? 0x7u : rounded);  // 6 on: 6
  return static_cast<uint8_t>(code | sign);
}

PLAB_HD float e2m1ToFloat(uint8_t code) {
  const uint32_t sign = static_cast<uint32_t>(code & 0x8u) << 28;
  const uint32_t exponent = (code >> 1) & 0x3u, mantissa = code & 0x1u;
  const uint32_t small = mantissa != 0 ? 0x3F000000u : 0u;  // 0 or 0.5
  return floatOf(sign | (exponent == 0 ? small : ((exponent + 126u) << 23) | (mantissa << 22)));
}

}  // namespace plab::formats
