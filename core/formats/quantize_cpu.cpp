// The CPU twin of the GEMM formats' fake quantization: splits elements or
// blocks into fixed chunks on torch's thread pool and runs the variant of
// quantize_cpu_loop.h this CPU supports (AVX2 where there is one). Every
// block or element is computed the same way whichever thread or variant
// runs it, so the result depends on neither.
//
// Tables (bf16 input, large tensors): an element's value depends on nothing
// but its input, the tensor scale and (block schemes) its block's scale
// code, and a bf16 input takes 65,536 values. So the variant's own element
// loop computes, once per call, the values of all 65,536 bf16 inputs (per
// scale code in use, for the block schemes), and each element is then one
// table read: the same bits by construction, several times faster than the
// element function even where it vectorises (measured in bench_quantize).
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
// A block scheme takes the tables from this many elements on (the tied
// head's operands; below it the tables' set-up outweighs them: with tables
// from 2^17 elements on, mxfp8 steps ran slower on 2 threads), where they
// hold at most half as many entries (65,536 per scale code in use) as the
// tensor has elements.
constexpr int64_t kBlockTableMinElements = int64_t(1) << 22;
constexpr int64_t kElementsPerTableEntry = 2;
constexpr std::size_t kMaxCodeTables = 128;  // and at most this many tables (32 MiB)

using Largest = uint32_t (*)(const QuantizeArgs&, int64_t, int64_t);
using Range = void (*)(const QuantizeArgs&, float, int64_t, int64_t);
using CodeElements = void (*)(const QuantizeArgs&, float, uint8_t, int64_t, int64_t);

// The loops of one CPU variant.
struct VariantLoops {
  Largest largestOf = largestMagnitudeBaseline;
  Range rows = quantizeRangeBaseline;
  Range columnTiles = quantizeColumnTilesBaseline;
  Range blockCodes = blockCodesBaseline;
  CodeElements codeElements = codeElementsBaseline;
};

VariantLoops loopsOf(QuantizeCpuVariant variant) {
  VariantLoops l;
#ifdef PLAB_QUANTIZE_X86
  if (variant == QuantizeCpuVariant::Avx2)
    l = {largestMagnitudeAvx2, quantizeRangeAvx2, quantizeColumnTilesAvx2, blockCodesAvx2, codeElementsAvx2};
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

// The values of all bf16 inputs, as `a`'s scheme quantizes them (block
// schemes: in a block of scale code `code`), by the variant's own loop, in
// a's output type.
template <typename Out>
void fillTable(const QuantizeArgs& a, float tensorScale, const VariantLoops& loops, uint8_t code, Out* table) {
  QuantizeArgs t = a;
  t.in = allBf16Patterns();
  t.inBf16 = true;
  setOutput(t, table);
  t.rows = 1;
  t.cols = kPatterns;
  t.blockScales = nullptr;
  if (blockSizeOf(a.scheme) == 0) loops.rows(t, tensorScale, 0, kPatterns);
  else loops.codeElements(t, tensorScale, code, 0, kPatterns);
}

// The calling thread's table storage, kept from call to call (at most 32
// MiB, 128 fp32 tables of 256 KiB), so that no call allocates and zero-fills it.
template <typename Out>
Out* tableStorage(int64_t entries) {
  thread_local std::vector<Out> storage;
  if (static_cast<int64_t>(storage.size()) < entries) storage.resize(static_cast<std::size_t>(entries));
  return storage.data();
}

// An elementwise scheme through one table.
template <typename Out>
void tableElements(const QuantizeArgs& a, float tensorScale, const VariantLoops& loops) {
  Out* table = tableStorage<Out>(kPatterns);
  fillTable(a, tensorScale, loops, 0, table);
  const auto* in = static_cast<const uint16_t*>(a.in);
  const Out* values = table;
  Out* out = outputOf<Out>(a);
  const int64_t n = a.rows * a.cols;
  parallelChunks((n + kChunk - 1) / kChunk, 1, [&](int64_t first, int64_t last) {
    const int64_t end = std::min(n, last * kChunk);
    for (int64_t i = first * kChunk; i < end; ++i) out[i] = values[in[i]];
  });
}

// One table per scale code in use (the codes already in a.blockScales, count
// of them); empty where they would hold more entries than the rule allows.
template <typename Out>
struct CodeTables {
  Out* storage = nullptr;
  const Out* of[256] = {};
};

template <typename Out>
bool buildCodeTables(const QuantizeArgs& a, float tensorScale, const VariantLoops& loops, int64_t codeCount,
                     CodeTables<Out>& tables) {
  bool used[256] = {};
  for (int64_t i = 0; i < codeCount; ++i) used[a.blockScales[i]] = true;
  std::vector<uint8_t> codes;
  for (int c = 0; c < 256; ++c)
    if (used[c]) codes.push_back(static_cast<uint8_t>(c));
  const int64_t entries = static_cast<int64_t>(codes.size()) * kPatterns;
  if (a.rows * a.cols < kBlockTableMinElements || entries * kElementsPerTableEntry > a.rows * a.cols ||
      codes.size() > kMaxCodeTables)
    return false;
  tables.storage = tableStorage<Out>(entries);
  for (std::size_t k = 0; k < codes.size(); ++k) tables.of[codes[k]] = tables.storage + k * kPatterns;
  parallelChunks(static_cast<int64_t>(codes.size()), 1, [&](int64_t first, int64_t last) {
    for (int64_t k = first; k < last; ++k)
      fillTable(a, tensorScale, loops, codes[k], tables.storage + k * kPatterns);
  });
  return true;
}

// A block scheme along the rows through the tables; false (nothing
// written but the codes) where the rule says no tables.
template <typename Out>
bool tableBlocks(const QuantizeArgs& a, float tensorScale, const VariantLoops& loops) {
  if (a.rows * a.cols < kBlockTableMinElements) return false;
  const int64_t blocks = a.rows * blocksPerRow(a.scheme, a.cols);
  parallelChunks(blocks, kBlocksPerTask, [&](int64_t first, int64_t last) { loops.blockCodes(a, tensorScale, first, last); });
  CodeTables<Out> tables;
  if (!buildCodeTables(a, tensorScale, loops, blocks, tables)) return false;
  const auto* in = static_cast<const uint16_t*>(a.in);
  Out* out = outputOf<Out>(a);
  parallelChunks(blocks, kBlocksPerTask, [&](int64_t first, int64_t last) {
    for (int64_t b = first; b < last; ++b) {
      int64_t begin, end;
      blockRange(a, b, &begin, &end);
      const Out* values = tables.of[a.blockScales[b]];
      for (int64_t i = begin; i < end; ++i) out[i] = values[in[i]];
    }
  });
  return true;
}

}  // namespace

std::vector<QuantizeCpuVariant> availableQuantizeCpuVariants() {
  std::vector<QuantizeCpuVariant> out = {QuantizeCpuVariant::Baseline};
#ifdef PLAB_QUANTIZE_X86
  if (__builtin_cpu_supports("avx2")) out.push_back(QuantizeCpuVariant::Avx2);
#endif
  return out;
}

float quantizeCpu(const QuantizeArgs& a) { return quantizeCpu(a, bestVariant(), true); }

float quantizeCpu(const QuantizeArgs& a, QuantizeCpuVariant variant) { return quantizeCpu(a, variant, false); }

float quantizeCpu(const QuantizeArgs& a, QuantizeCpuVariant variant, bool tables) {
  const VariantLoops loops = loopsOf(variant);
  const Largest largestOf = loops.largestOf;
  const Range range = loops.rows;
  const int64_t n = a.rows * a.cols;
  if (n == 0) return hasTensorScale(a.scheme) ? tensorScaleOf(a.scheme, 0.0f) : 1.0f;
  const float tensorScale = tensorScaleFor(a, largestOf);
  const bool blocks = blockSizeOf(a.scheme) != 0;
  if (tables && a.inBf16 && !blocks && n >= kTableMinElements) {
    if (a.outBf16) tableElements<uint16_t>(a, tensorScale, loops);
    else tableElements<float>(a, tensorScale, loops);
    return tensorScale;
  }
  if (tables && a.inBf16 && blocks &&
      (a.outBf16 ? tableBlocks<uint16_t>(a, tensorScale, loops) : tableBlocks<float>(a, tensorScale, loops)))
    return tensorScale;
  if (!blocks) {
    parallelChunks((n + kChunk - 1) / kChunk, 1, [&](int64_t first, int64_t last) {
      range(a, tensorScale, first * kChunk, std::min(n, last * kChunk));
    });
  } else {
    parallelChunks(a.rows * blocksPerRow(a.scheme, a.cols), kBlocksPerTask,
                     [&](int64_t first, int64_t last) { range(a, tensorScale, first, last); });
  }
  return tensorScale;
}

float quantizeColumnsCpu(const QuantizeArgs& a) { return quantizeColumnsCpu(a, bestVariant(), true); }

float quantizeColumnsCpu(const QuantizeArgs& a, QuantizeCpuVariant variant) {
  return quantizeColumnsCpu(a, variant, false);
}

float quantizeColumnsCpu(const QuantizeArgs& a, QuantizeCpuVariant variant, bool tables) {
  const VariantLoops loops = loopsOf(variant);
  const Largest largestOf = loops.largestOf;
  const Range tiles = loops.columnTiles;
  const int64_t size = blockSizeOf(a.scheme);
  if (size == 0 || a.rows * a.cols == 0) return quantizeCpu(a, variant, tables);  // elementwise: the layout does not matter
  const float tensorScale = tensorScaleFor(a, largestOf);
  // No tables down the columns: a tile's elements run along contiguous
  // columns and the element functions vectorise there (bench_quantize,
  // 1024 x 50,257 bf16, one thread: mxfp8 39 ms against 67 through tables,
  // nvfp4 64 against 89).
  (void)tables;
  const int64_t count = (a.rows + size - 1) / size * columnTilesPerGroup(a.cols);
  parallelChunks(count, 4, [&](int64_t first, int64_t last) { tiles(a, tensorScale, first, last); });
  return tensorScale;
}

}  // namespace plab::formats
