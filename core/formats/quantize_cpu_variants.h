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
enum class QuantizeCpuVariant { Baseline, Avx2 };
// What this build has and this CPU runs, the fastest last (quantizeCpu's choice).
std::vector<QuantizeCpuVariant> availableQuantizeCpuVariants();
// One variant, the element function on every element (quantizeCpu(args),
// quantize_kernels.h, may read a bf16 input's elements from a table of the
// same function's values instead).
float quantizeCpu(const QuantizeArgs& args, QuantizeCpuVariant variant);
// quantizeCpu(args) and quantizeColumnsCpu(args) with or without the tables
// (the tables only where they apply: a large enough bf16 input), so that
// tests can hold one to the other.
float quantizeCpu(const QuantizeArgs& args, QuantizeCpuVariant variant, bool tables);
float quantizeColumnsCpu(const QuantizeArgs& args, QuantizeCpuVariant variant, bool tables);

uint32_t largestMagnitudeBaseline(const QuantizeArgs& a, int64_t begin, int64_t end);
void quantizeRangeBaseline(const QuantizeArgs& a, float tensorScale, int64_t first, int64_t last);
void quantizeColumnTilesBaseline(const QuantizeArgs& a, float tensorScale, int64_t first, int64_t last);
void blockCodesBaseline(const QuantizeArgs& a, float tensorScale, int64_t first, int64_t last);
void codeElementsBaseline(const QuantizeArgs& a, float tensorScale, uint8_t code, int64_t begin, int64_t end);
// Blocks down the columns (quantize_column_tile.h): block schemes only.
float quantizeColumnsCpu(const QuantizeArgs& args, QuantizeCpuVariant variant);
#ifdef PLAB_QUANTIZE_X86
uint32_t largestMagnitudeAvx2(const QuantizeArgs& a, int64_t begin, int64_t end);
void quantizeRangeAvx2(const QuantizeArgs& a, float tensorScale, int64_t first, int64_t last);
void quantizeColumnTilesAvx2(const QuantizeArgs& a, float tensorScale, int64_t first, int64_t last);
void blockCodesAvx2(const QuantizeArgs& a, float tensorScale, int64_t first, int64_t last);
void codeElementsAvx2(const QuantizeArgs& a, float tensorScale, uint8_t code, int64_t begin, int64_t end);
#endif

}  // namespace plab::formats
