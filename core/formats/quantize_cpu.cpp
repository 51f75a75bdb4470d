// The CPU twin of the GEMM formats' fake quantization: splits elements or
// blocks into fixed chunks on torch's thread pool and runs the variant of
// quantize_cpu_loop.h this CPU supports (AVX-512 or AVX2 where there is
// one). Every block or element is computed the same way whichever thread or
// variant runs it, so the result depends on neither.
//
// Fast paths, each held bit for bit (NaN payloads aside) to the element
// function on every element (test_formats::fastPathsAreTheElementFunction):
// - elementwise schemes, large bf16 input: an element's value depends on
//   nothing but its input and the tensor scale, and a bf16 input takes
//   65,536 values. So the variant's own element loop computes, once per
//   call, the values of all 65,536 bf16 inputs, and each element is then one
//   table read (several times faster than the element function even where
//   it vectorises: bench_quantize);
// - block schemes along the rows: groups of blocks in one pass, codes and
//   factors in vectorised loops, each whole block's elements in one loop of
//   fixed length (quantize_cpu_loop.h rowBlocks). Per-code tables did this
//   before and were slower (bench_quantize 1024 x 50,257 bf16 operand rows,
//   one thread, AVX-512: nvfp4 40 ms against 60, mxfp8 28 against 33).
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
constexpr int64_t kPatterns = 65536;     // bf16 inputs: entries of one table
// An elementwise scheme takes the table from this many elements on; below
// it, the element function on each element costs less than the table.
constexpr int64_t kTableMinElements = int64_t(1) << 17;

using Largest = uint32_t (*)(const QuantizeArgs&, int64_t, int64_t);
using Range = void (*)(const QuantizeArgs&, float, int64_t, int64_t);

// The loops of one CPU variant.
struct VariantLoops {
  Largest largestOf = largestMagnitudeBaseline;
  Range rows = quantizeRangeBaseline;
  Range columnTiles = quantizeColumnTilesBaseline;
  Range rowBlocks = rowBlocksBaseline;
};

VariantLoops loopsOf(QuantizeCpuVariant variant) {
  VariantLoops l;
#ifdef PLAB_QUANTIZE_X86
  if (variant == QuantizeCpuVariant::Avx2)
    l = {largestMagnitudeAvx2, quantizeRangeAvx2, quantizeColumnTilesAvx2, rowBlocksAvx2};
  if (variant == QuantizeCpuVariant::Avx512)
    l = {largestMagnitudeAvx512, quantizeRangeAvx512, quantizeColumnTilesAvx512, rowBlocksAvx512};
#endif
  (void)variant;
  return l;
}

QuantizeCpuVariant bestVariant() {
  static const QuantizeCpuVariant best = availableQuantizeCpuVariants().back();
  return best;
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

// The tensor scale of `a`'s scheme: known, or from the amax (one pass).
float tensorScaleFor(const QuantizeArgs& a, Largest largestOf) {
  if (!hasTensorScale(a.scheme)) return 1.0f;
  return a.hasKnownTensorScale ? a.knownTensorScale : tensorScaleOf(a.scheme, amaxOf(a, largestOf));
}

const uint16_t* allBf16Patterns() {
  static const std::vector<uint16_t> patterns = [] {
    std::vector<uint16_t> p(kPatterns);
    for (std::size_t i = 0; i < p.size(); ++i) p[i] = static_cast<uint16_t>(i);
    return p;
  }();
  return patterns.data();
}

// a's output as Out (float: a.out; uint16_t: a.outBf16), and setting it.
template <typename Out>
Out* outputOf(const QuantizeArgs& a);
template <>
float* outputOf<float>(const QuantizeArgs& a) { return a.out; }
template <>
uint16_t* outputOf<uint16_t>(const QuantizeArgs& a) { return a.outBf16; }
void setOutput(QuantizeArgs& a, float* out) { a.out = out, a.outBf16 = nullptr; }
void setOutput(QuantizeArgs& a, uint16_t* out) { a.out = nullptr, a.outBf16 = out; }

// The values of all bf16 inputs, as `a`'s elementwise scheme quantizes
// them, by the variant's own loop, in a's output type.
template <typename Out>
void fillTable(const QuantizeArgs& a, float tensorScale, const VariantLoops& loops, Out* table) {
  QuantizeArgs t = a;
  t.in = allBf16Patterns();
  t.inBf16 = true;
  setOutput(t, table);
  t.rows = 1;
  t.cols = kPatterns;
  loops.rows(t, tensorScale, 0, kPatterns);
}

// The calling thread's table storage, kept from call to call (256 KiB), so
// that no call allocates and zero-fills it.
template <typename Out>
Out* tableStorage() {
  thread_local std::vector<Out> storage(kPatterns);
  return storage.data();
}

// An elementwise scheme through one table.
template <typename Out>
void tableElements(const QuantizeArgs& a, float tensorScale, const VariantLoops& loops) {
  Out* table = tableStorage<Out>();
  fillTable(a, tensorScale, loops, table);
  const auto* in = static_cast<const uint16_t*>(a.in);
  const Out* values = table;
  Out* out = outputOf<Out>(a);
  const int64_t n = a.rows * a.cols;
  parallelChunks((n + kChunk - 1) / kChunk, 1, [&](int64_t first, int64_t last) {
    const int64_t end = std::min(n, last * kChunk);
    for (int64_t i = first * kChunk; i < end; ++i) out[i] = values[in[i]];
  });
}

}  // namespace

std::vector<QuantizeCpuVariant> availableQuantizeCpuVariants() {
  std::vector<QuantizeCpuVariant> out = {QuantizeCpuVariant::Baseline};
#ifdef PLAB_QUANTIZE_X86
  if (__builtin_cpu_supports("avx2")) out.push_back(QuantizeCpuVariant::Avx2);
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
    out.push_back(QuantizeCpuVariant::Avx512);
#endif
  return out;
}

float quantizeCpu(const QuantizeArgs& a) { return quantizeCpu(a, bestVariant(), true); }

float quantizeCpu(const QuantizeArgs& a, QuantizeCpuVariant variant) { return quantizeCpu(a, variant, false); }

float quantizeCpu(const QuantizeArgs& a, QuantizeCpuVariant variant, bool fastPaths) {
  const VariantLoops loops = loopsOf(variant);
  const int64_t n = a.rows * a.cols;
  if (n == 0) return hasTensorScale(a.scheme) ? tensorScaleOf(a.scheme, 0.0f) : 1.0f;
  const float tensorScale = tensorScaleFor(a, loops.largestOf);
  const bool blocks = blockSizeOf(a.scheme) != 0;
  if (fastPaths && a.inBf16 && !blocks && n >= kTableMinElements) {
    if (a.outBf16) tableElements<uint16_t>(a, tensorScale, loops);
    else tableElements<float>(a, tensorScale, loops);
  } else if (!blocks) {
    parallelChunks((n + kChunk - 1) / kChunk, 1, [&](int64_t first, int64_t last) {
      loops.rows(a, tensorScale, first * kChunk, std::min(n, last * kChunk));
    });
  } else {
    const Range blocksOf = fastPaths ? loops.rowBlocks : loops.rows;
    parallelChunks(a.rows * blocksPerRow(a.scheme, a.cols), kBlocksPerTask,
                   [&](int64_t first, int64_t last) { blocksOf(a, tensorScale, first, last); });
  }
  return tensorScale;
}

float quantizeColumnsCpu(const QuantizeArgs& a) {
  return blockSizeOf(a.scheme) == 0 ? quantizeCpu(a) : quantizeColumnsCpu(a, bestVariant());
}

// No tables or second path down the columns: a tile's elements run along
// contiguous columns and the element functions vectorise there.
float quantizeColumnsCpu(const QuantizeArgs& a, QuantizeCpuVariant variant) {
  const VariantLoops loops = loopsOf(variant);
  const int64_t size = blockSizeOf(a.scheme);
  if (size == 0 || a.rows * a.cols == 0) return quantizeCpu(a, variant);  // elementwise: the layout does not matter
  const float tensorScale = tensorScaleFor(a, loops.largestOf);
  const int64_t count = (a.rows + size - 1) / size * columnTilesPerGroup(a.cols);
  parallelChunks(count, 4, [&](int64_t first, int64_t last) { loops.columnTiles(a, tensorScale, first, last); });
  return tensorScale;
}

}  // namespace plab::formats
