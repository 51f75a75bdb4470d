#pragma once
// The fake-quantization kernels of the GEMM formats: the contract their CPU
// loop (quantize_cpu.cpp, quantize_cpu_loop.h) and CUDA kernels
// (quantize_cuda.cu) share, and the per-block work both run. One pass reads
// the input (fp32 or bf16) and writes the quantized-then-dequantized values
// as fp32 plus the block scales; the per-tensor formats read the input once
// more first, for its amax. No temporaries. Torch-free.
//
// Blocks run along the rows (the last, contiguous dimension). A row whose
// length is not a multiple of the block size ends in a shorter block, scaled
// by its own amax: the same as padding the row with zeros to a whole block
// (zeros change neither amax nor any other element) and dropping the padding.
// torchao requires whole blocks; tests/reference/formats_vs_torchao.py gives
// it the rows padded that way.
#include <cstdint>
#include <type_traits>

#include "formats/fp8_element.h"
#include "formats/gemm_format_id.h"
#include "formats/minifloat_grid.h"
#include "formats/mx_block.h"
#include "formats/nvfp4_block.h"
#include "precision/kernels/bf16_bits.h"

namespace plab::formats {

enum class Scheme : int32_t {
  Bf16,           // round to nearest even to bf16 (x.to(bf16).to(fp32))
  Fp8E4m3Tensor,  // e4m3, torchao's current per-tensor scale
  Fp8E5m2Tensor,  // e5m2, the same
  Mxfp8,          // e4m3 elements, 32-element blocks, E8M0 scales (FLOOR)
  Mxfp4,          // e2m1 elements, 32-element blocks, E8M0 scales (FLOOR)
  Nvfp4,          // e2m1 elements, 16-element blocks, e4m3 scales, fp32 tensor scale
};

// The scheme a format quantizes an operand in `role` with (gemm_format.cpp).
Scheme schemeOf(GemmFormat f, GemmRole role);

PLAB_HD int blockSizeOf(Scheme s) {
  return s == Scheme::Mxfp8 || s == Scheme::Mxfp4 ? kMxBlock : (s == Scheme::Nvfp4 ? kNvfp4Block : 0);
}
PLAB_HD bool hasTensorScale(Scheme s) {
  return s == Scheme::Fp8E4m3Tensor || s == Scheme::Fp8E5m2Tensor || s == Scheme::Nvfp4;
}

struct QuantizeArgs {
  Scheme scheme = Scheme::Bf16;
  const void* in = nullptr;  // const float* or, with inBf16, const uint16_t* (bf16 bits)
  bool inBf16 = false;
  float* out = nullptr;      // rows * cols, may not alias in
  // CPU only: bf16 bits instead of `out` (rows * cols). Only for
  // gemmOperand values, which bf16 holds exactly.
  uint16_t* outBf16 = nullptr;
  // The values as a GEMM takes them (quantizeForGemm): without the tensor
  // scale, which the product applies to its result. fp8: the e4m3 / e5m2
  // values; NVFP4: e2m1 x e4m3 block scale; MX: the values (E8M0 scales are
  // powers of two). The scale codes and the tensor scale are the same.
  bool gemmOperand = false;
  // CPU only: this tensor's tensor scale, known from an earlier call on the
  // same tensor (its rows, when quantizing its columns): no amax pass.
  bool hasKnownTensorScale = false;
  float knownTensorScale = 0.0f;
  int64_t rows = 0, cols = 0;
  uint8_t* blockScales = nullptr;  // rows * blocksPerRow(cols) codes (E8M0 or e4m3); block schemes only
};

PLAB_HD int64_t blocksPerRow(Scheme s, int64_t cols) {
  const int64_t b = blockSizeOf(s);
  return b == 0 ? 0 : (cols + b - 1) / b;
}

PLAB_HD float loadInput(const float* p, int64_t i) { return p[i]; }
PLAB_HD float loadInput(const uint16_t* p, int64_t i) { return kernels::bf16ToFloat(p[i]); }

// |x| as bits: unsigned order is magnitude order, NaN above +Inf, so the
// largest is NaN when any element is (as torch.amax and torch.max).
PLAB_HD uint32_t magnitudeBits(float x) { return bitsOf(x) & 0x7FFFFFFFu; }

// The amax of the largest magnitude bits. A NaN amax is the all-ones
// pattern, the NaN torch's CPU max reduction returns: the NaNs that follow
// from it (scales, values) then carry torchao's sign and payload.
PLAB_HD float amaxOfBits(uint32_t largestMagnitude) {
  return floatOf(largestMagnitude > 0x7F800000u ? 0xFFFFFFFFu : largestMagnitude);
}

// The tensor scale the per-tensor schemes use, from the tensor's amax.
PLAB_HD float tensorScaleOf(Scheme s, float amax) {
  if (s == Scheme::Fp8E4m3Tensor) return fp8TensorScale(amax, kE4m3Max);
  if (s == Scheme::Fp8E5m2Tensor) return fp8TensorScale(amax, kE5m2Max);
  if (s == Scheme::Nvfp4) return nvfp4TensorScale(amax);
  return 1.0f;
}

// Where a value goes: fp32, or bf16 bits (the GEMM operands on the CPU).
PLAB_HD void storeValue(float* out, int64_t i, float v) { out[i] = v; }
PLAB_HD void storeValue(uint16_t* out, int64_t i, float v) { out[i] = kernels::bf16Nearest(v); }

// The tensor scale the values leave with: none for a GEMM operand.
PLAB_HD float outputTensorScale(const QuantizeArgs& a, float tensorScale) {
  return a.gemmOperand ? 1.0f : tensorScale;
}

// Elements [begin, end) of an elementwise scheme (Bf16, the per-tensor fp8
// ones), into `out` (a.out or a.outBf16).
template <typename In, typename Out>
PLAB_HD void quantizeElements(const QuantizeArgs& a, const In* in, Out* out, float tensorScale, int64_t begin,
                              int64_t end) {
  const float divisor = outputTensorScale(a, tensorScale);
  if (a.scheme == Scheme::Bf16) {
    for (int64_t i = begin; i < end; ++i)
      storeValue(out, i, kernels::bf16ToFloat(kernels::bf16Nearest(loadInput(in, i))));
  } else if (a.scheme == Scheme::Fp8E4m3Tensor) {
    for (int64_t i = begin; i < end; ++i) storeValue(out, i, fp8TensorElementE4m3(loadInput(in, i), tensorScale, divisor));
  } else {
    for (int64_t i = begin; i < end; ++i) storeValue(out, i, fp8TensorElementE5m2(loadInput(in, i), tensorScale, divisor));
  }
}

// A block scheme's scale code for a block of largest magnitude `amax`
// (E8M0 for MX, e4m3 for NVFP4).
PLAB_HD uint8_t blockScaleCode(Scheme s, float amax, float tensorScale) {
  if (s == Scheme::Nvfp4) return nvfp4BlockScale(amax, tensorScale);
  return mxScaleFloor(amax, s == Scheme::Mxfp8 ? kE4m3MaxPow2 : kE2m1MaxPow2);
}

// What a block's elements are scaled by on the way in (NVFP4: multiplied by
// the reciprocal; MX: divided by the divisor) and multiplied by on the way
// out, from the block's code: the elements depend on nothing else.
PLAB_HD float blockScaleIn(Scheme s, uint8_t code, float tensorScale) {
  return s == Scheme::Nvfp4 ? nvfp4Reciprocal(code, tensorScale) : mxDivisor(code);
}
PLAB_HD float blockMultiplier(Scheme s, uint8_t code, float tensorScale) {
  return s == Scheme::Nvfp4 ? nvfp4Multiplier(code, tensorScale) : mxMultiplier(code);
}

// The scale codes of n blocks from their largest magnitudes (bits), and
// the factors of n blocks from their codes, by the per-block functions
// above: one loop per scheme, the scheme a constant inside it, so that each
// folds to one scheme's arithmetic and vectorises (with the scheme read
// inside the loop, the per-block work cost as much as the block's elements).
template <Scheme S>
using SchemeConstant = std::integral_constant<Scheme, S>;  // a type whose ::value is the scheme
PLAB_HD void blockCodesOfLargest(Scheme s, const uint32_t* largest, int64_t n, float tensorScale, uint8_t* codes) {
  auto codesOf = [&](auto scheme) {
    for (int64_t j = 0; j < n; ++j)
      codes[j] = blockScaleCode(decltype(scheme)::value, amaxOfBits(largest[j]), tensorScale);
  };
  if (s == Scheme::Nvfp4) codesOf(SchemeConstant<Scheme::Nvfp4>{});
  else if (s == Scheme::Mxfp8) codesOf(SchemeConstant<Scheme::Mxfp8>{});
  else codesOf(SchemeConstant<Scheme::Mxfp4>{});
}
PLAB_HD void blockFactorsOfCodes(Scheme s, const uint8_t* codes, int64_t n, float tensorScale, float outScale,
                                 float* scaleIn, float* multiplier) {
  auto factorsOf = [&](auto scheme) {
    for (int64_t j = 0; j < n; ++j) {
      scaleIn[j] = blockScaleIn(decltype(scheme)::value, codes[j], tensorScale);
      multiplier[j] = blockMultiplier(decltype(scheme)::value, codes[j], outScale);
    }
  };
  if (s == Scheme::Nvfp4) factorsOf(SchemeConstant<Scheme::Nvfp4>{});
  else factorsOf(SchemeConstant<Scheme::Mxfp8>{});  // MX: the same factors for both element types
}

// Elements [begin, end) of a block scheme, all in blocks of scale code
// `code`, into `out` (a.out or a.outBf16).
template <typename In, typename Out>
PLAB_HD void quantizeBlockElements(const QuantizeArgs& a, const In* in, Out* out, float tensorScale, uint8_t code,
                                   int64_t begin, int64_t end) {
  const float scaleIn = blockScaleIn(a.scheme, code, tensorScale);
  const float multiplier = blockMultiplier(a.scheme, code, outputTensorScale(a, tensorScale));
  if (a.scheme == Scheme::Nvfp4) {
    for (int64_t i = begin; i < end; ++i) storeValue(out, i, nvfp4Element(loadInput(in, i), scaleIn, multiplier));
  } else if (a.scheme == Scheme::Mxfp8) {
    for (int64_t i = begin; i < end; ++i) storeValue(out, i, mxfp8Element(loadInput(in, i), scaleIn, multiplier));
  } else {
    for (int64_t i = begin; i < end; ++i) storeValue(out, i, mxfp4Element(loadInput(in, i), scaleIn, multiplier));
  }
}

// Elements [begin, end) of the block `block` (row-major over rows x
// blocksPerRow) of a block scheme, and its largest magnitude as bits.
PLAB_HD void blockRange(const QuantizeArgs& a, int64_t block, int64_t* begin, int64_t* end) {
  const int64_t perRow = blocksPerRow(a.scheme, a.cols);
  const int64_t row = block / perRow, size = blockSizeOf(a.scheme);
  *begin = row * a.cols + (block % perRow) * size;
  *end = *begin + size < (row + 1) * a.cols ? *begin + size : (row + 1) * a.cols;
}

template <typename In>
PLAB_HD uint32_t largestMagnitudeBits(const In* in, int64_t begin, int64_t end) {
  uint32_t amaxBits = 0;
  for (int64_t i = begin; i < end; ++i) {
    const uint32_t m = magnitudeBits(loadInput(in, i));
    amaxBits = m > amaxBits ? m : amaxBits;
  }
  return amaxBits;
}

// Block `block` of a block scheme: its scale code, then its elements.
template <typename In, typename Out>
PLAB_HD void quantizeBlock(const QuantizeArgs& a, const In* in, Out* out, float tensorScale, int64_t block) {
  int64_t begin, end;
  blockRange(a, block, &begin, &end);
  const uint8_t code = blockScaleCode(a.scheme, amaxOfBits(largestMagnitudeBits(in, begin, end)), tensorScale);
  quantizeBlockElements(a, in, out, tensorScale, code, begin, end);
  a.blockScales[block] = code;
}

// CPU twin: at::parallel_for over fixed chunks of elements or blocks (a
// large bf16 input to an elementwise scheme: the element function's values
// for all 65,536 bf16 inputs, then one table read per element; the same bits).
// Returns the tensor scale (1 where the scheme has none): fp8, the factor
// the values were multiplied by; NVFP4, torchao's per_tensor_scale.
float quantizeCpu(const QuantizeArgs& args);
// The same with blocks down the columns of the rows x cols input
// (quantize_column_tile.h): block scale codes [cols, row blocks], as for x^T.
float quantizeColumnsCpu(const QuantizeArgs& args);

// CUDA twin (formats/quantize_cuda.cu; only in builds with CUDA kernels):
// launches on `stream` (a cudaStream_t). deviceAmaxBits points to one uint32
// on the device (scratch, zeroed here); the tensor scale is written to the
// float *deviceTensorScale on the device.
void quantizeCuda(const QuantizeArgs& args, uint32_t* deviceAmaxBits, float* deviceTensorScale, void* stream);

}  // namespace plab::formats
