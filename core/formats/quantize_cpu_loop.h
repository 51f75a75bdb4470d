// The CPU twin's ranges of work, compiled once per instruction set: included
// by quantize_cpu_baseline.cpp and quantize_cpu_avx2.cpp, each defining
// PLAB_QUANTIZE_VARIANT to its suffix. The element functions are branch-free
// (selects), so that with AVX2 (variable shifts) the element loops
// vectorise; every variant computes the same bits. Nothing here includes
// torch: the functions a variant brings in have internal linkage (PLAB_HD is
// static on the host), so the linker cannot hand AVX2 code to the baseline.
#pragma once
#include "formats/quantize_column_tile.h"
#include "formats/quantize_cpu_variants.h"
#include "formats/quantize_kernels.h"

#ifndef PLAB_QUANTIZE_VARIANT
#error "define PLAB_QUANTIZE_VARIANT before including this file"
#endif
#define PLAB_QUANTIZE_JOIN2(a, b) a##b
#define PLAB_QUANTIZE_JOIN(a, b) PLAB_QUANTIZE_JOIN2(a, b)

namespace plab::formats {

uint32_t PLAB_QUANTIZE_JOIN(largestMagnitude, PLAB_QUANTIZE_VARIANT)(const QuantizeArgs& a, int64_t begin,
                                                                     int64_t end) {
  uint32_t largest = 0;
  if (a.inBf16) {
    const auto* in = static_cast<const uint16_t*>(a.in);
    for (int64_t i = begin; i < end; ++i) largest = largest > magnitudeBits(loadInput(in, i)) ? largest : magnitudeBits(loadInput(in, i));
  } else {
    const auto* in = static_cast<const float*>(a.in);
    for (int64_t i = begin; i < end; ++i) largest = largest > magnitudeBits(in[i]) ? largest : magnitudeBits(in[i]);
  }
  return largest;
}

// Calls f(in, out) with a's input and output as their types (fp32 or bf16
// each). Internal linkage, as the element functions: one per variant.
template <typename F>
static void withInputAndOutput(const QuantizeArgs& a, F&& f) {
  if (a.inBf16) {
    const auto* in = static_cast<const uint16_t*>(a.in);
    if (a.outBf16) f(in, a.outBf16);
    else f(in, a.out);
  } else {
    const auto* in = static_cast<const float*>(a.in);
    if (a.outBf16) f(in, a.outBf16);
    else f(in, a.out);
  }
}

void PLAB_QUANTIZE_JOIN(quantizeRange, PLAB_QUANTIZE_VARIANT)(const QuantizeArgs& a, float tensorScale,
                                                              int64_t first, int64_t last) {
  const bool blocks = blockSizeOf(a.scheme) != 0;
  withInputAndOutput(a, [&](const auto* in, auto* out) {
    if (!blocks) quantizeElements(a, in, out, tensorScale, first, last);
    else for (int64_t b = first; b < last; ++b) quantizeBlock(a, in, out, tensorScale, b);
  });
}

// Tiles [first, last) of a block scheme quantized down the columns (quantize_column_tile.h).
void PLAB_QUANTIZE_JOIN(quantizeColumnTiles, PLAB_QUANTIZE_VARIANT)(const QuantizeArgs& a, float tensorScale,
                                                                    int64_t first, int64_t last) {
  withInputAndOutput(a, [&](const auto* in, auto* out) {
    for (int64_t t = first; t < last; ++t) quantizeColumnTile(a, in, out, tensorScale, t);
  });
}

// Only the scale codes of row blocks [first, last), into blockScales (the
// tables of quantize_cpu.cpp then give the elements).
// (Groups of blocks: first each block's largest magnitude, a whole block in
// a loop of fixed length, then the codes of the group in one loop, which
// vectorises.)
template <int kSize, typename In>
uint32_t PLAB_QUANTIZE_JOIN(blockLargest, PLAB_QUANTIZE_VARIANT)(const In* in, int64_t begin, int64_t end) {
  if (end - begin != kSize) return largestMagnitudeBits(in, begin, end);
  uint32_t largest = 0;
  for (int i = 0; i < kSize; ++i) {
    const uint32_t m = magnitudeBits(loadInput(in, begin + i));
    largest = m > largest ? m : largest;
  }
  return largest;
}

template <int kSize, typename In>
void PLAB_QUANTIZE_JOIN(blockCodesOf, PLAB_QUANTIZE_VARIANT)(const QuantizeArgs& a, const In* in, float tensorScale,
                                                             int64_t first, int64_t last) {
  constexpr int64_t kGroup = 256;
  uint32_t largest[kGroup];
  for (int64_t g = first; g < last; g += kGroup) {
    const int64_t count = last - g < kGroup ? last - g : kGroup;
    for (int64_t j = 0; j < count; ++j) {
      int64_t begin, end;
      blockRange(a, g + j, &begin, &end);
      largest[j] = PLAB_QUANTIZE_JOIN(blockLargest, PLAB_QUANTIZE_VARIANT)<kSize>(in, begin, end);
    }
    uint8_t* codes = a.blockScales + g;
    if (a.scheme == Scheme::Nvfp4) {
      for (int64_t j = 0; j < count; ++j) codes[j] = nvfp4BlockScale(amaxOfBits(largest[j]), tensorScale);
    } else {
      const int maxPow2 = a.scheme == Scheme::Mxfp8 ? kE4m3MaxPow2 : kE2m1MaxPow2;
      for (int64_t j = 0; j < count; ++j) codes[j] = mxScaleFloor(amaxOfBits(largest[j]), maxPow2);
    }
  }
}

void PLAB_QUANTIZE_JOIN(blockCodes, PLAB_QUANTIZE_VARIANT)(const QuantizeArgs& a, float tensorScale, int64_t first,
                                                           int64_t last) {
  const bool nvfp4 = a.scheme == Scheme::Nvfp4;
  if (a.inBf16) {
    const auto* in = static_cast<const uint16_t*>(a.in);
    if (nvfp4) PLAB_QUANTIZE_JOIN(blockCodesOf, PLAB_QUANTIZE_VARIANT)<kNvfp4Block>(a, in, tensorScale, first, last);
    else PLAB_QUANTIZE_JOIN(blockCodesOf, PLAB_QUANTIZE_VARIANT)<kMxBlock>(a, in, tensorScale, first, last);
  } else {
    const auto* in = static_cast<const float*>(a.in);
    if (nvfp4) PLAB_QUANTIZE_JOIN(blockCodesOf, PLAB_QUANTIZE_VARIANT)<kNvfp4Block>(a, in, tensorScale, first, last);
    else PLAB_QUANTIZE_JOIN(blockCodesOf, PLAB_QUANTIZE_VARIANT)<kMxBlock>(a, in, tensorScale, first, last);
  }
}

// Elements [begin, end) of a block scheme as in a block of scale code `code`.
void PLAB_QUANTIZE_JOIN(codeElements, PLAB_QUANTIZE_VARIANT)(const QuantizeArgs& a, float tensorScale, uint8_t code,
                                                             int64_t begin, int64_t end) {
  withInputAndOutput(a, [&](const auto* in, auto* out) {
    quantizeBlockElements(a, in, out, tensorScale, code, begin, end);
  });
}

}  // namespace plab::formats
