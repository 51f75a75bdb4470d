#pragma once
// The CPU twin's variants, one per instruction set (quantize_cpu_loop.h):
// the largest magnitude bits of elements [begin, end), and the elements
// (elementwise schemes) or blocks (block schemes) [first, last).
// quantize_cpu.cpp splits the work between threads and picks the variant.
#include <cstdint>
#include <vector>

namespace plab::formats {

struct QuantizeArgs;

// The variants by name, so that tests can hold each one to the baseline.
enum class QuantizeCpuVariant { Baseline, Avx2, Avx512 };
// What this build has and this CPU runs, the fastest last (quantizeCpu's choice).
std::vector<QuantizeCpuVariant> availableQuantizeCpuVariants();
// One variant, the element function on every element (blocks: quantizeBlock
// on each block, as the CUDA kernel does).
float quantizeCpu(const QuantizeArgs& args, QuantizeCpuVariant variant);
// The same with or without the fast paths quantizeCpu(args) takes (tables of
// a large bf16 input's values for the elementwise schemes, row blocks in
// groups for the block schemes: quantize_cpu.cpp), so that tests can hold
// one to the other.
float quantizeCpu(const QuantizeArgs& args, QuantizeCpuVariant variant, bool fastPaths);
// Blocks down the columns (quantize_column_tile.h): block schemes only.
float quantizeColumnsCpu(const QuantizeArgs& args, QuantizeCpuVariant variant);

uint32_t largestMagnitudeBaseline(const QuantizeArgs& a, int64_t begin, int64_t end);
void quantizeRangeBaseline(const QuantizeArgs& a, float tensorScale, int64_t first, int64_t last);
void quantizeColumnTilesBaseline(const QuantizeArgs& a, float tensorScale, int64_t first, int64_t last);
void rowBlocksBaseline(const QuantizeArgs& a, float tensorScale, int64_t first, int64_t last);
#ifdef PLAB_QUANTIZE_X86
uint32_t largestMagnitudeAvx2(const QuantizeArgs& a, int64_t begin, int64_t end);
void quantizeRangeAvx2(const QuantizeArgs& a, float tensorScale, int64_t first, int64_t last);
void quantizeColumnTilesAvx2(const QuantizeArgs& a, float tensorScale, int64_t first, int64_t last);
void rowBlocksAvx2(const QuantizeArgs& a, float tensorScale, int64_t first, int64_t last);
uint32_t largestMagnitudeAvx512(const QuantizeArgs& a, int64_t begin, int64_t end);
void quantizeRangeAvx512(const QuantizeArgs& a, float tensorScale, int64_t first, int64_t last);
void quantizeColumnTilesAvx512(const QuantizeArgs& a, float tensorScale, int64_t first, int64_t last);
void rowBlocksAvx512(const QuantizeArgs& a, float tensorScale, int64_t first, int64_t last);
#endif

}  // namespace plab::formats
