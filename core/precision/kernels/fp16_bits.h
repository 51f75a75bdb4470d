#pragma once
// fp32 <-> fp16 (IEEE binary16) by bit operations, as torch 2.13's
// .to(torch.float16) on the CPU and back, and what writing one fp32 value
// to fp16 did to it. Torch-free; the same code on the host and on the
// device. Integer arithmetic only (one exact int -> float conversion), so
// the result does not depend on flush-to-zero or DAZ.
#include <cstdint>

#include "formats/fp8_element.h"
#include "precision/kernels/bf16_bits.h"

namespace plab::kernels {

constexpr float kFp16Max = 65504.0f;
constexpr uint32_t kFp16OverflowBits = 0x477FF000u;  // 65520: the tie above 65504, the first value that rounds to Inf

// Round to nearest, ties to even, with subnormals (down to 2^-24; 2^-25 is
// the tie with 0, which goes to 0) and IEEE overflow: from 65520 on, +-Inf.
// The rounding is the minifloat rounding the fp8 formats use (10 mantissa
// bits, bias 15). NaN stays NaN with its sign and the top 9 bits of its
// payload, quiet (0x7FC00000 -> 0x7E00; 0x7FFFFFFF -> 0x7FFF): the bits
// torch's CPU cast (F16C) writes. NaN payloads are no part of the contract.
PLAB_HD uint16_t fp16FromFloat(float x) {
  const uint32_t u = bitsOf(x);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t magnitude = u & 0x7FFFFFFFu;
  const uint32_t rounded = formats::roundToMinifloat<10, 15>(magnitude);
  const uint32_t nan = 0x7E00u | ((magnitude >> 13) & 0x3FFu);
  const uint32_t code = magnitude > 0x7F800000u ? nan : (magnitude >= kFp16OverflowBits ? 0x7C00u : rounded);
  return static_cast<uint16_t>(code | sign);
}

// The exact value. Subnormals become normal fp32 values; NaN keeps its sign
// and payload and becomes quiet (0x7C01 -> 0x7FC02000), as torch's
// vectorised CPU cast (its scalar cast writes 0x7FFFFFFF for every NaN).
PLAB_HD float fp16ToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1Fu;
  const uint32_t mantissa = h & 0x3FFu;
  const uint32_t normal = ((exponent + 112u) << 23) | (mantissa << 13);
  const uint32_t special = 0x7F800000u | (mantissa << 13) | (mantissa != 0 ? 0x400000u : 0u);
  // mantissa * 2^-24: mantissa converted exactly, then 24 taken off its
  // exponent field (the result is a normal fp32 value).
  const uint32_t subnormal = mantissa != 0 ? bitsOf(static_cast<float>(mantissa)) - (24u << 23) : 0u;
  const uint32_t magnitude = exponent == 0 ? subnormal : (exponent == 31 ? special : normal);
  return floatOf(sign | magnitude);
}

// What writing one fp32 value to fp16 did to it. +-0, +-Inf and NaN stay
// what they were: Exact.
enum class Fp16Write : uint8_t {
  Exact,          // the fp16 value equals the fp32 value
  Rounded,        // a different finite, non-zero value (a normal or a subnormal)
  FlushedToZero,  // a non-zero finite value became +-0 (|x| <= 2^-25)
  Overflowed,     // a finite value became +-Inf (|x| >= 65520)
};

// The two losses by magnitude alone, without rounding (what the counting
// loop uses: compares only, so it vectorises); the same answers as
// classifyFp16Write (test_fp16 checks both against torch's cast).
constexpr uint32_t kFp16FlushBits = 0x33000000u;  // 2^-25: the tie with 0, the largest value that flushes
PLAB_HD bool fp16FlushesToZero(uint32_t magnitude) { return magnitude - 1u < kFp16FlushBits; }
PLAB_HD bool fp16Overflows(uint32_t magnitude) {
  return magnitude >= kFp16OverflowBits && magnitude < 0x7F800000u;
}

PLAB_HD Fp16Write classifyFp16Write(float x, uint16_t h) {
  const uint32_t magnitude = bitsOf(x) & 0x7FFFFFFFu;
  const uint32_t written = h & 0x7FFFu;
  const bool finiteNonZero = magnitude != 0 && magnitude < 0x7F800000u;
  if (!finiteNonZero) return Fp16Write::Exact;
  if (written == 0) return Fp16Write::FlushedToZero;
  if (written == 0x7C00u) return Fp16Write::Overflowed;
  return bitsOf(fp16ToFloat(h)) == bitsOf(x) ? Fp16Write::Exact : Fp16Write::Rounded;
}

}  // namespace plab::kernels
