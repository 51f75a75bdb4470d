#pragma once
// fp32 <-> bf16 by bit operations (a bf16 value is the top half of an fp32
// bit pattern). Torch-free; the same code on the host and on the device.
#include <cstdint>
#include <cstring>

#include "precision/kernels/host_device.h"

namespace plab::kernels {

PLAB_HD uint32_t bitsOf(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}

PLAB_HD float floatOf(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
#endif
}

PLAB_HD float bf16ToFloat(uint16_t b) { return floatOf(static_cast<uint32_t>(b) << 16); }

// Round to nearest, ties to even: what c10::BFloat16 and torch's
// .to(kBFloat16) do. NaN -> 0x7FC0 as the scalar c10::BFloat16 cast writes
// it (torch 2.13's vectorised CPU cast writes 0xFFFF: the NaN is the same,
// its bits are not).
// (Selects rather than branches: the CPU loop vectorises.)
PLAB_HD uint16_t bf16Nearest(float x) {
  const uint32_t u = bitsOf(x);
  const uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
  const bool nan = (u & 0x7FFFFFFFu) > 0x7F800000u;
  return static_cast<uint16_t>(nan ? 0x7FC0u : rounded);
}

// Stochastic rounding with torchao's rule (_fp32_to_bf16_sr): with f the 16
// bits below the bf16 mantissa and r the random number, round the magnitude
// up when r < f, i.e. add 0xFFFF - r below the mantissa and truncate; x goes
// up with probability f / 2^16, its distance from the lower neighbour
// (unbiased), and the same r gives torchao's result. Adding to the sign-magnitude pattern grows
// the magnitude for either sign; finite patterns stay below 0x7F7FFFFF +
// 0xFFFF, so nothing carries into the sign. NaN and +-Inf pass through as
// bf16Nearest writes them: +-Inf truncated (exact), NaN as 0x7FC0.
PLAB_HD uint16_t bf16Stochastic(float x, uint32_t random16) {
  const uint32_t u = bitsOf(x);
  const bool special = (u & 0x7F800000u) == 0x7F800000u;
  const bool nan = (u & 0x7FFFFFFFu) > 0x7F800000u;
  const uint32_t rounded = (u + (special ? 0u : 0xFFFFu - random16)) >> 16;
  return static_cast<uint16_t>(nan ? 0x7FC0u : rounded);
}

}  // namespace plab::kernels
