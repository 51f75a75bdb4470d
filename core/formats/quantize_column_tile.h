#pragma once
// Blocks down the columns (CPU only): a rows x cols row-major input whose
// blocks run along the FIRST dimension, i.e. what quantizing the transposed
// copy x^T (blocks along its rows) gives, written back in x's own layout with
// no transposed copy. The backward products need their operands quantized
// along the token (and out-feature) dimension; this reads them in place.
// One tile: a group of block-size rows times a chunk of columns; the
// per-column amax, scale and element work run along contiguous columns, so
// that they vectorise. The element functions are the row kernel's: the same
// bits as quantizeBlock on x^T. Block scale codes go where x^T's would:
// blockScales[column * groups + group].
#include "formats/quantize_kernels.h"

namespace plab::formats {

constexpr int64_t kColumnTile = 256;  // columns per tile

PLAB_HD int64_t columnTilesPerGroup(int64_t cols) { return (cols + kColumnTile - 1) / kColumnTile; }

// The rows [r0, r1) and columns [c0, c0 + n) of tile `tile`, and its group
// (which block down the columns it is).
struct ColumnTile {
  int64_t group, groups, r0, r1, c0, n;
};

PLAB_HD ColumnTile columnTileOf(const QuantizeArgs& a, int64_t tile) {
  const int64_t size = blockSizeOf(a.scheme);
  const int64_t tilesPerGroup = columnTilesPerGroup(a.cols);
  ColumnTile t;
  t.groups = (a.rows + size - 1) / size;
  t.group = tile / tilesPerGroup;
  t.c0 = (tile % tilesPerGroup) * kColumnTile;
  t.n = a.cols - t.c0 < kColumnTile ? a.cols - t.c0 : kColumnTile;
  t.r0 = t.group * size;
  t.r1 = t.r0 + size < a.rows ? t.r0 + size : a.rows;
  return t;
}

template <typename In, typename Out>
PLAB_HD void quantizeColumnTile(const QuantizeArgs& a, const In* in, Out* out, float tensorScale, int64_t tile) {
  const ColumnTile t = columnTileOf(a, tile);
  const int64_t n = t.n;
  uint32_t amaxBits[kColumnTile];
  float scaleIn[kColumnTile], multiplier[kColumnTile];
  for (int64_t c = 0; c < n; ++c) amaxBits[c] = 0;
  for (int64_t r = t.r0; r < t.r1; ++r)
    for (int64_t c = 0; c < n; ++c) {
      const uint32_t m = magnitudeBits(loadInput(in, r * a.cols + t.c0 + c));
      amaxBits[c] = m > amaxBits[c] ? m : amaxBits[c];
    }
  uint8_t codes[kColumnTile];
  blockCodesOfLargest(a.scheme, amaxBits, n, tensorScale, codes);
  blockFactorsOfCodes(a.scheme, codes, n, tensorScale, outputTensorScale(a, tensorScale), scaleIn, multiplier);
  for (int64_t c = 0; c < n; ++c) a.blockScales[(t.c0 + c) * t.groups + t.group] = codes[c];
  for (int64_t r = t.r0; r < t.r1; ++r) {
    const int64_t base = r * a.cols + t.c0;
    if (a.scheme == Scheme::Nvfp4) {
      for (int64_t c = 0; c < n; ++c) storeValue(out, base + c, nvfp4Element(loadInput(in, base + c), scaleIn[c], multiplier[c]));
    } else if (a.scheme == Scheme::Mxfp8) {
      for (int64_t c = 0; c < n; ++c) storeValue(out, base + c, mxfp8Element(loadInput(in, base + c), scaleIn[c], multiplier[c]));
    } else {
      for (int64_t c = 0; c < n; ++c) storeValue(out, base + c, mxfp4Element(loadInput(in, base + c), scaleIn[c], multiplier[c]));
    }
  }
}

}  // namespace plab::formats
