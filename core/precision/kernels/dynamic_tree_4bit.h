#pragma once
// Block-wise 4-bit quantization of an optimizer moment, as torchao's
// OptimState4bit stores m and v (AdamW4bit, after Li et al., "Memory
// Efficient Optimizers with 4-bit States", arXiv:2309.01507): blocks of 128
// values divided by their largest magnitude (the scale, at least 1e-12, as
// the 8-bit store's: dynamicTreeScale), each quotient stored as the index of
// one of 16 code values, found by torchao's 4-step binary search and rounded
// to the nearer of the two code values around it (ties upwards); two codes
// per byte, the even element's in the high half. The tables
// (precision/dynamic_tree_code.h): m on torchao's 16-value signed dynamic
// map, v on the linear map 1/16 .. 1, which has no zero (a block of zeros
// dequantizes to scale / 16). Pure functions, the same on the host and in a
// CUDA kernel.
#include <cstdint>

#include "precision/kernels/dynamic_tree_8bit.h"
#include "precision/kernels/host_device.h"

namespace plab::kernels {

constexpr int64_t kDynamicTree4Block = 128;  // torchao AdamW4bit's block_size
constexpr int kDynamicTree4Codes = 16;

// torchao quantizes a moment when its tensor has at least 4096 elements and
// a whole number of (128-element) blocks, as for 8 bits.
PLAB_HD bool dynamicTree4Quantizes(int64_t numel) { return numel >= 4096 && numel % kDynamicTree4Block == 0; }

// torchao's quantize_4bit_with_qmap for one scaled value q: the last table
// entry <= q by a branchless 4-step search (0 when q is below every entry or
// NaN), then the next one up when q lies at least half-way to it.
PLAB_HD uint8_t dynamicTree4Code(float q, const float* table) {
  int code = q >= table[8] ? 8 : 0;
  for (int step = 4; step >= 1; step >>= 1) code += q >= table[code + step] ? step : 0;
  const int up = code + 1 > 15 ? 15 : code + 1;
  const float down = table[code];
  const float residual = q - down;
  return static_cast<uint8_t>(residual >= (table[up] - down) * 0.5f ? up : code);
}

// The same code by a 4-level binary search over its thresholds (the least
// fp32 value whose code is at least k, k = 1..15: dynamicTree4Code is
// monotone in q, as the 8-bit code is), in search order
// (thresholdSearchOrderOf<4>): what the AVX-512 loop computes, 16 entries in
// one register. test_quantized_kernels holds it to dynamicTree4Code.
constexpr int kDynamicTree4Thresholds = 16;  // [0] unused (-Inf), 1..15
PLAB_HD uint8_t dynamicTree4CodeBySearch(float q, const float* order) { return codeByThresholdSearch<4>(q, order); }

// Element i's code in the packed bytes (even i: the high half).
PLAB_HD uint8_t unpack4(const uint8_t* packed, int64_t i) {
  const uint8_t byte = packed[i / 2];
  return static_cast<uint8_t>(i % 2 == 0 ? byte >> 4 : byte & 0x0F);
}

}  // namespace plab::kernels
