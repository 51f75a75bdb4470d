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

template <typename In>
PLAB_HD void quantizeColumnTile(const QuantizeArgs& a, const In* in, float tensorScale, int64_t tile) {
  const int64_t size = blockSizeOf(a.scheme);
  const int64_t groups = (a.rows + size - 1) / size;
  const int64_t tilesPerGroup = columnTilesPerGroup(a.cols);
  const int64_t group = tile / tilesPerGroup;
  const int64_t c0 = (tile % tilesPerGroup) * kColumnTile;
  const int64_t n = a.cols - c0 < kColumnTile ? a.cols - c0 : kColumnTile;
  const int64_t r0 = group * size, r1 = r0 + size < a.rows ? r0 + size : a.rows;
  uint32_t amaxBits[kColumnTile];
  float scaleIn[kColumnTile], multiplier[kColumnTile];
  for (int64_t c = 0; c < n; ++c) amaxBits[c] = 0;
  for (int64_t r = r0; r < r1; ++r)
    for (int64_t c = 0; c < n; ++c) {
      const uint32_t m = magnitudeBits(loadInput(in, r * a.cols + c0 + c));
      amaxBits[c] = m > amaxBits[c] ? m : amaxBits[c];
    }
  for (int64_t c = 0; c < n; ++c) {
    const float amax = amaxOfBits(amaxBits[c]);
    uint8_t code;
    if (a.scheme == Scheme::Nvfp4) {
      code = nvfp4BlockScale(amax, tensorScale);
      scaleIn[c] = nvfp4Reciprocal(code, tensorScale);
      multiplier[c] = nvfp4Multiplier(code, tensorScale);
    } else {
      code = mxScaleFloor(amax, a.scheme == Scheme::Mxfp8 ? kE4m3MaxPow2 : kE2m1MaxPow2);
      scaleIn[c] = mxDivisor(code);
      multiplier[c] = mxMultiplier(code);
    }
    a.blockScales[(c0 + c) * groups + group] = code;
  }
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t base = r * a.cols + c0;
    if (a.scheme == Scheme::Nvfp4) {
      for (int64_t c = 0; c < n; ++c) a.out[base + c] = nvfp4Element(loadInput(in, base + c), scaleIn[c], multiplier[c]);
    } else if (a.scheme == Scheme::Mxfp8) {
      for (int64_t c = 0; c < n; ++c) a.out[base + c] = mxfp8Element(loadInput(in, base + c), scaleIn[c], multiplier[c]);
    } else {
      for (int64_t c = 0; c < n; ++c) a.out[base + c] = mxfp4Element(loadInput(in, base + c), scaleIn[c], multiplier[c]);
    }
  }
}

}  // namespace plab::formats
