#pragma once
// Block-wise 8-bit quantization of an optimizer moment with a dynamic-tree
// code, as torchao's OptimState8bit stores m and v (after Dettmers et al.,
// "8-bit Optimizers via Block-wise Quantization", arXiv:2110.02861): a block
// of values is divided by its largest magnitude (the block's scale, at least
// 1e-12) and each quotient is stored as the index of a code value, found by
// an 8-step binary search and then rounded to the nearer of the two code
// values around it (ties upwards). The code table (256 fp32 values, sorted;
// signed for m, unsigned for v) is built by precision/dynamic_tree_code.h,
// with a table of starting codes that replaces the binary search by one
// lookup and a step or two (same result: the last code value <= q).
// Pure functions, the same on the host and in a CUDA kernel; every
// operation is rounded once, as torch's tensor ops round them.
#include <cstdint>

#include "precision/kernels/bf16_bits.h"
#include "precision/kernels/host_device.h"

namespace plab::kernels {

constexpr int64_t kDynamicTreeBlock = 256;  // torchao AdamW8bit's block_size
// torchao (after bitsandbytes) quantizes a moment only when its tensor has
// at least this many elements and a whole number of blocks.
constexpr int64_t kDynamicTreeMinElements = 4096;

PLAB_HD bool dynamicTreeQuantizes(int64_t numel) {
  return numel >= kDynamicTreeMinElements && numel % kDynamicTreeBlock == 0;
}

// The block's scale: max |x|, clipped below at 1e-12 (fp32). NaN propagates
// as torch's amax propagates it.
PLAB_HD float dynamicTreeScale(const float* x, int64_t n) {
  float top = 0;
  bool nan = false;
  float nanValue = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float a = x[i] < 0 ? -x[i] : x[i];
    if (a != a) {
      nan = true;
      nanValue = a;
    }
    top = a > top ? a : top;
  }
  if (nan) return nanValue;
  return top < 1e-12f ? 1e-12f : top;
}

// A float's bits as an unsigned key that orders like the values (NaN aside):
// negatives flipped, positives above them. Its top 16 bits (sign, exponent,
// 7 mantissa bits) pick q's bucket: 2^-7 of an octave wide, so a bucket of
// the code's range holds at most a few code values.
constexpr int kDynamicTreeBucketShift = 16;
constexpr int64_t kDynamicTreeBuckets = int64_t{1} << (32 - kDynamicTreeBucketShift);
PLAB_HD uint32_t orderedKey(float q) {
  const uint32_t b = bitsOf(q);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

// The last table entry <= q (0 when q is below every entry or NaN): torchao's
// 8-step branchless binary search. The reference the lookup below must equal.
PLAB_HD int dynamicTreeSearch(float q, const float* table) {
  int code = q >= table[128] ? 128 : 0;
  for (int step = 64; step >= 1; step >>= 1) code += q >= table[code + step] ? step : 0;
  return code;
}

// The same code from `start` (kDynamicTreeBuckets entries: the search's
// result for the lowest value of each bucket, precision/dynamic_tree_code.h):
// the result is monotone in q, so it is at least the bucket's start and is
// reached by stepping up while the next entry is <= q.
PLAB_HD int dynamicTreeLookup(float q, const float* table, const uint8_t* start) {
  if (q != q) return 0;  // NaN: every comparison of the search is false
  int code = start[orderedKey(q) >> kDynamicTreeBucketShift];
  while (code < 255 && q >= table[code + 1]) ++code;
  return code;
}

// The code of one scaled value q = x / scale: the last table entry <= q,
// then the next one up when q lies at least half-way to it.
PLAB_HD uint8_t dynamicTreeCode(float q, const float* table, const uint8_t* start) {
  const int code = dynamicTreeLookup(q, table, start);
  const int up = code + 1 > 255 ? 255 : code + 1;
  const float down = table[code];
  const float residual = q - down;
  return static_cast<uint8_t>(residual >= (table[up] - down) * 0.5f ? up : code);
}

// The same code as a count of thresholds: dynamicTreeCode is monotone in q
// (the last entry <= q is; the rounding between two entries moves up once),
// so the code of q is the number of k in 1..255 whose threshold[k], the
// least fp32 value whose code is at least k, is <= q
// (dynamicTreeThresholds below builds them). `codeStart` holds the code
// of each bucket's lowest value (dynamicTreeCodeStarts); from there the
// code steps up while the next threshold is <= q. threshold[256] and
// [257] are NaN, so that no comparison passes them. No rounding arithmetic
// is left, and the CPU loop's vector form needs two table reads per value.
constexpr int kDynamicTreeThresholds = 258;
PLAB_HD uint8_t dynamicTreeCodeByThresholds(float q, const float* threshold, const uint8_t* codeStart) {
  if (q != q) return 0;
  int code = codeStart[orderedKey(q) >> kDynamicTreeBucketShift];
  while (code < 255 && q >= threshold[code + 1]) ++code;
  return static_cast<uint8_t>(code);
}

// The same count by a branchless binary search over the thresholds 1..255
// in search order (the Eytzinger layout: order[1] = threshold[128], then
// each level's thresholds left to right, order[2^l + i] =
// threshold[(2i + 1) * 2^(7 - l)]; order[0] unused). Since the thresholds
// are sorted, those <= q are a prefix 1..c, and the search's path spells c
// bit by bit (a NaN q fails every comparison: 0). No bucket table, and
// level l reads 2^l entries of the order, which the AVX-512 loop holds in
// registers and reads by permutes. Levels = 4 is the same for the 4-bit
// code's 15 thresholds (dynamic_tree_4bit.h).
constexpr int kDynamicTreeSearchOrder = 256;
template <int Levels>
PLAB_HD void thresholdSearchOrderOf(const float* threshold, float* order) {
  order[0] = threshold[0];
  for (int level = 0; level < Levels; ++level) {
    const int first = 1 << level, step = (1 << (Levels - 1)) >> level;
    for (int i = 0; i < first; ++i) order[first + i] = threshold[(2 * i + 1) * step];
  }
}
template <int Levels>
PLAB_HD uint8_t codeByThresholdSearch(float q, const float* order) {
  int p = 1;
  for (int level = 0; level < Levels; ++level) p = 2 * p + (q >= order[p] ? 1 : 0);
  return static_cast<uint8_t>(p - (1 << Levels));
}
PLAB_HD void dynamicTreeSearchOrderOf(const float* threshold, float* order) {
  thresholdSearchOrderOf<8>(threshold, order);
}
PLAB_HD uint8_t dynamicTreeCodeBySearch(float q, const float* order) { return codeByThresholdSearch<8>(q, order); }

// Quantizes one block of n values into codes; returns its scale.
PLAB_HD float quantizeDynamicTreeBlock(const float* x, int64_t n, const float* table, const uint8_t* start,
                                       uint8_t* codes) {
  const float scale = dynamicTreeScale(x, n);
  for (int64_t i = 0; i < n; ++i) codes[i] = dynamicTreeCode(x[i] / scale, table, start);
  return scale;
}

PLAB_HD float dequantizeDynamicTree(uint8_t code, const float* table, float scale) { return table[code] * scale; }

}  // namespace plab::kernels
