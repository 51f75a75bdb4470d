// The CPU twin's ranges of work, compiled once per instruction set: included
// by quantize_cpu_baseline.cpp, quantize_cpu_avx2.cpp and
// quantize_cpu_avx512.cpp, each defining
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

namespace {  // one per variant, as the element functions (internal linkage)

// Row blocks one after the other: blockRange's elements without its two
// integer divisions per block (which cost as much as a block's elements).
struct RowBlockWalk {
  int64_t cols, size, perRow, row, k;
  RowBlockWalk(const QuantizeArgs& a, int64_t block)
      : cols(a.cols), size(blockSizeOf(a.scheme)), perRow(blocksPerRow(a.scheme, a.cols)),
        row(block / perRow), k(block % perRow) {}
  int64_t begin() const { return row * cols + k * size; }
  int64_t end() const { return k + 1 < perRow ? begin() + size : (row + 1) * cols; }
  void next() {
    if (++k == perRow) k = 0, ++row;
  }
};

// Row blocks [first, last) of a block scheme in one pass over the input, in
// groups: each block's largest magnitude (a whole block in a loop of fixed
// length), the group's codes and factors (loops that vectorise), then each
// whole block's elements in a loop of fixed length (one or two vectors), the
// group still in the L1 cache. The same functions as quantizeBlock: the same bits.
template <int kSize, typename In, typename Out, typename Element>
void rowBlocksOf(const QuantizeArgs& a, const In* in, Out* out, float tensorScale, int64_t first, int64_t last,
                 Element element) {
  constexpr int64_t kGroup = 64;
  const float outScale = outputTensorScale(a, tensorScale);
  uint32_t largest[kGroup];
  float scaleIn[kGroup], multiplier[kGroup];
  RowBlockWalk codesWalk(a, first), elementsWalk(a, first);
  for (int64_t g = first; g < last; g += kGroup) {
    const int64_t count = last - g < kGroup ? last - g : kGroup;
    for (int64_t j = 0; j < count; ++j, codesWalk.next()) {
      const int64_t begin = codesWalk.begin(), end = codesWalk.end();
      if (end - begin != kSize) {
        largest[j] = largestMagnitudeBits(in, begin, end);
        continue;
      }
      uint32_t m = 0;  // a whole block: a loop of fixed length
      for (int i = 0; i < kSize; ++i) {
        const uint32_t v = magnitudeBits(loadInput(in, begin + i));
        m = m > v ? m : v;
      }
      largest[j] = m;
    }
    blockCodesOfLargest(a.scheme, largest, count, tensorScale, a.blockScales + g);
    blockFactorsOfCodes(a.scheme, a.blockScales + g, count, tensorScale, outScale, scaleIn, multiplier);
    for (int64_t j = 0; j < count; ++j, elementsWalk.next()) {
      const int64_t begin = elementsWalk.begin(), end = elementsWalk.end();
      const float s = scaleIn[j], m = multiplier[j];
      if (end - begin == kSize) {
        const In* __restrict x = in + begin;
        Out* __restrict y = out + begin;
        for (int i = 0; i < kSize; ++i) storeValue(y, i, element(loadInput(x, i), s, m));
      } else {
        for (int64_t i = begin; i < end; ++i) storeValue(out, i, element(loadInput(in, i), s, m));
      }
    }
  }
}

}  // namespace

void PLAB_QUANTIZE_JOIN(rowBlocks, PLAB_QUANTIZE_VARIANT)(const QuantizeArgs& a, float tensorScale, int64_t first,
                                                          int64_t last) {
  withInputAndOutput(a, [&](const auto* in, auto* out) {
    // Lambdas, not the functions' pointers: one instantiation per element function, inlined.
    if (a.scheme == Scheme::Nvfp4)
      rowBlocksOf<kNvfp4Block>(a, in, out, tensorScale, first, last,
                               [](float x, float s, float m) { return nvfp4Element(x, s, m); });
    else if (a.scheme == Scheme::Mxfp8)
      rowBlocksOf<kMxBlock>(a, in, out, tensorScale, first, last,
                            [](float x, float s, float m) { return mxfp8Element(x, s, m); });
    else
      rowBlocksOf<kMxBlock>(a, in, out, tensorScale, first, last,
                            [](float x, float s, float m) { return mxfp4Element(x, s, m); });
  });
}

}  // namespace plab::formats
