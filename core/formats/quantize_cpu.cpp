// The CPU twin of the GEMM formats' fake quantization: splits elements or
// blocks into fixed chunks on torch's thread pool and runs the variant of
// quantize_cpu_loop.h this CPU supports (AVX2 where there is one). Every
// block or element is computed the same way whichever thread or variant
// runs it, so the result depends on neither.
#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "util/parallel_chunks.h"
#include "formats/quantize_column_tile.h"
#include "formats/quantize_cpu_variants.h"
#include "formats/quantize_kernels.h"

namespace plab::formats {
namespace {

constexpr int64_t kChunk = 1 << 14;      // elements per task of the elementwise passes
constexpr int64_t kBlocksPerTask = 512;  // blocks per task of the block schemes
// bf16 input to an elementwise scheme from this many elements on goes through
// a table of all 65,536 bf16 inputs (tableQuantize); below it, the element
// function on each element costs less than the table.
constexpr int64_t kTableMinElements = int64_t(1) << 17;

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

// An elementwise scheme's output depends on nothing but the input and the
// tensor scale, and a bf16 input takes 65,536 values: the variant's own range
// computes them all once into a table (the element function on every bf16
// pattern), and each element is then a table read, about 8x faster than the
// element function even where it vectorises. The same bits by construction.
void tableQuantize(const QuantizeArgs& a, float tensorScale, Range range) {
  static const std::vector<uint16_t> patterns = [] {
    std::vector<uint16_t> p(65536);
    for (std::size_t i = 0; i < p.size(); ++i) p[i] = static_cast<uint16_t>(i);
    return p;
  }();
  std::vector<float> table(patterns.size());
  QuantizeArgs t = a;
  t.in = patterns.data();
  t.out = table.data();
  t.rows = 1;
  t.cols = static_cast<int64_t>(patterns.size());
  range(t, tensorScale, 0, t.cols);
  const auto* in = static_cast<const uint16_t*>(a.in);
  const float* values = table.data();
  const int64_t n = a.rows * a.cols;
  parallelChunks((n + kChunk - 1) / kChunk, 1, [&](int64_t first, int64_t last) {
    const int64_t end = std::min(n, last * kChunk);
    for (int64_t i = first * kChunk; i < end; ++i) a.out[i] = values[in[i]];
  });
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
  const int64_t n = a.rows * a.cols;
  if (!a.inBf16 || blockSizeOf(a.scheme) != 0 || n < kTableMinElements) return quantizeCpu(a, best);
  const VariantLoops loops = loopsOf(best);
  const float tensorScale = hasTensorScale(a.scheme) ? tensorScaleOf(a.scheme, amaxOf(a, loops.largestOf)) : 1.0f;
  tableQuantize(a, tensorScale, loops.rows);
  return tensorScale;
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
