// The CPU twin of the GEMM formats' fake quantization: splits elements or
// blocks into fixed chunks on torch's thread pool and runs the variant of
// quantize_cpu_loop.h this CPU supports (AVX2 where there is one). Every
// block or element is computed the same way whichever thread or variant
// runs it, so the result depends on neither.
#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>

#include "util/parallel_chunks.h"
#include "formats/quantize_column_tile.h"
#include "formats/quantize_cpu_variants.h"
#include "formats/quantize_kernels.h"

namespace plab::formats {
namespace {

constexpr int64_t kChunk = 1 << 14;      // elements per task of the elementwise passes
constexpr int64_t kBlocksPerTask = 512;  // blocks per task of the block schemes

using Largest = uint32_t (*)(const QuantizeArgs&, int64_t, int64_t);
using Range = void (*)(const QuantizeArgs&, float, int64_t, int64_t);

// The loops of one CPU variant.
struct VariantLoops {
  Largest largestOf = largestMagnitudeBaseline;
  Range rows = quantizeRangeBaseline;
  Range columnTiles = quantizeColumnTilesBaseline;
};

VariantLoops loopsOf(QuantizeCpuVariant variant) {
  VariantLoops l;
#ifdef PLAB_QUANTIZE_X86
  if (variant == QuantizeCpuVariant::Avx2) l = {largestMagnitudeAvx2, quantizeRangeAvx2, quantizeColumnTilesAvx2};
#endif
  (void)variant;
  return l;
}

float amaxOf(const QuantizeArgs& a, Largest largestOf) {
  const int64_t n = a.rows * a.cols;
  std::atomic<uint32_t> largest{0};
  parallelChunks((n + kChunk - 1) / kChunk, 1, [&](int64_t first, int64_t last) {
    const uint32_t mine = largestOf(a, first * kChunk, std::min(n, last * kChunk));
    uint32_t seen = largest.load();
    while (mine > seen && !largest.compare_exchange_weak(seen, mine)) {
    }
  });
  return amaxOfBits(largest.load());
}

}  // namespace

std::vector<QuantizeCpuVariant> availableQuantizeCpuVariants() {
  std::vector<QuantizeCpuVariant> out = {QuantizeCpuVariant::Baseline};
#ifdef PLAB_QUANTIZE_X86
  if (__builtin_cpu_supports("avx2")) out.push_back(QuantizeCpuVariant::Avx2);
#endif
  return out;
}

float quantizeCpu(const QuantizeArgs& a) {
  static const QuantizeCpuVariant best = availableQuantizeCpuVariants().back();
  return quantizeCpu(a, best);
}

float quantizeCpu(const QuantizeArgs& a, QuantizeCpuVariant variant) {
  const VariantLoops loops = loopsOf(variant);
  const Largest largestOf = loops.largestOf;
  const Range range = loops.rows;
  const int64_t n = a.rows * a.cols;
  if (n == 0) return hasTensorScale(a.scheme) ? tensorScaleOf(a.scheme, 0.0f) : 1.0f;
  const float tensorScale = hasTensorScale(a.scheme) ? tensorScaleOf(a.scheme, amaxOf(a, largestOf)) : 1.0f;
  if (blockSizeOf(a.scheme) == 0) {
    parallelChunks((n + kChunk - 1) / kChunk, 1, [&](int64_t first, int64_t last) {
      range(a, tensorScale, first * kChunk, std::min(n, last * kChunk));
    });
  } else {
    parallelChunks(a.rows * blocksPerRow(a.scheme, a.cols), kBlocksPerTask,
                     [&](int64_t first, int64_t last) { range(a, tensorScale, first, last); });
  }
  return tensorScale;
}

float quantizeColumnsCpu(const QuantizeArgs& a) {
  static const QuantizeCpuVariant best = availableQuantizeCpuVariants().back();
  return quantizeColumnsCpu(a, best);
}

float quantizeColumnsCpu(const QuantizeArgs& a, QuantizeCpuVariant variant) {
  const VariantLoops loops = loopsOf(variant);
  const Largest largestOf = loops.largestOf;
  const Range tiles = loops.columnTiles;
  const int64_t size = blockSizeOf(a.scheme);
  if (size == 0 || a.rows * a.cols == 0) return quantizeCpu(a, variant);  // elementwise: the layout does not matter
  const float tensorScale = hasTensorScale(a.scheme) ? tensorScaleOf(a.scheme, amaxOf(a, largestOf)) : 1.0f;
  const int64_t count = (a.rows + size - 1) / size * columnTilesPerGroup(a.cols);
  parallelChunks(count, 4, [&](int64_t first, int64_t last) { tiles(a, tensorScale, first, last); });
  return tensorScale;
}

}  // namespace plab::formats
