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

void PLAB_QUANTIZE_JOIN(quantizeRange, PLAB_QUANTIZE_VARIANT)(const QuantizeArgs& a, float tensorScale,
                                                              int64_t first, int64_t last) {
  const bool blocks = blockSizeOf(a.scheme) != 0;
  if (a.inBf16) {
    const auto* in = static_cast<const uint16_t*>(a.in);
    if (!blocks) quantizeElements(a, in, tensorScale, first, last);
    else for (int64_t b = first; b < last; ++b) quantizeBlock(a, in, tensorScale, b);
  } else {
    const auto* in = static_cast<const float*>(a.in);
    if (!blocks) quantizeElements(a, in, tensorScale, first, last);
    else for (int64_t b = first; b < last; ++b) quantizeBlock(a, in, tensorScale, b);
  }
}

// Tiles [first, last) of a block scheme quantized down the columns (quantize_column_tile.h).
void PLAB_QUANTIZE_JOIN(quantizeColumnTiles, PLAB_QUANTIZE_VARIANT)(const QuantizeArgs& a, float tensorScale,
                                                                    int64_t first, int64_t last) {
  if (a.inBf16) {
    const auto* in = static_cast<const uint16_t*>(a.in);
    for (int64_t t = first; t < last; ++t) quantizeColumnTile(a, in, tensorScale, t);
  } else {
    const auto* in = static_cast<const float*>(a.in);
    for (int64_t t = first; t < last; ++t) quantizeColumnTile(a, in, tensorScale, t);
  }
}

// Only the scale codes of blocks [first, last) (row blocks) or tiles
// [first, last) (blocks down the columns), into blockScales.
void PLAB_QUANTIZE_JOIN(blockCodes, PLAB_QUANTIZE_VARIANT)(const QuantizeArgs& a, float tensorScale, int64_t first,
                                                           int64_t last) {
  for (int64_t b = first; b < last; ++b) {
    int64_t begin, end;
    blockRange(a, b, &begin, &end);
    const uint32_t largest = a.inBf16 ? largestMagnitudeBits(static_cast<const uint16_t*>(a.in), begin, end)
                                      : largestMagnitudeBits(static_cast<const float*>(a.in), begin, end);
    a.blockScales[b] = blockScaleCode(a.scheme, amaxOfBits(largest), tensorScale);
  }
}

void PLAB_QUANTIZE_JOIN(columnTileCodes, PLAB_QUANTIZE_VARIANT)(const QuantizeArgs& a, float tensorScale,
                                                                int64_t first, int64_t last) {
  if (a.inBf16) {
    const auto* in = static_cast<const uint16_t*>(a.in);
    for (int64_t t = first; t < last; ++t) columnTileCodes(a, in, tensorScale, t);
  } else {
    const auto* in = static_cast<const float*>(a.in);
    for (int64_t t = first; t < last; ++t) columnTileCodes(a, in, tensorScale, t);
  }
}

// Elements [begin, end) of a block scheme as in a block of scale code `code`.
void PLAB_QUANTIZE_JOIN(codeElements, PLAB_QUANTIZE_VARIANT)(const QuantizeArgs& a, float tensorScale, uint8_t code,
                                                             int64_t begin, int64_t end) {
  if (a.inBf16) quantizeBlockElements(a, static_cast<const uint16_t*>(a.in), tensorScale, code, begin, end);
  else quantizeBlockElements(a, static_cast<const float*>(a.in), tensorScale, code, begin, end);
}

}  // namespace plab::formats
