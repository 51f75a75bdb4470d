#pragma once
// The number format a Linear layer's GEMMs are simulated in, and the fake
// quantization that simulates it: each GEMM operand is quantized (bit-exact
// with torchao's reference quantizers) and either dequantized back to fp32
// (quantizeDequantize: the statistics, fp32 layers' products) or handed to
// a bf16 product as the GEMM takes it (quantizeForGemm, gemm_product.h).
// Simulated, not run on fp8 or fp4 tensor cores. docs/formats.md
// tables say what each one computes.
#include <torch/torch.h>

#include "formats/gemm_format_id.h"

namespace plab {

struct QuantizedTensor {
  torch::Tensor values;       // fp32, the input's shape: quantized, then dequantized
  torch::Tensor blockScales;  // uint8 [rows, blocks per row]: E8M0 (MX) or e4m3 (NVFP4) codes; undefined otherwise
  // fp32 scalar on x's device (no synchronisation with a GPU): fp8, the
  // factor the values were multiplied by; NVFP4, the fp32 tensor scale; else 1.
  torch::Tensor tensorScale;
};

// Quantizes `x` (fp32 or bf16, on the CPU or, in builds with CUDA kernels,
// on a GPU) as `format` quantizes an operand in `role`, and dequantizes it
// to fp32. Blocks run along the last dimension: pass the GEMM operand with
// its reduction dimension last. A row that does not divide into blocks ends
// in a shorter block (the same as zero padding). A non-contiguous x is
// copied once.
QuantizedTensor quantizeDequantize(const torch::Tensor& x, GemmFormat format, GemmRole role);

// The same for a 2-D x with blocks down its FIRST dimension: equal, bit for
// bit, to quantizeDequantize(x.t().contiguous(), format, role) transposed back
// (values in x's layout; blockScales [cols, blocks per column], as for x^T),
// without the transposed copy on the CPU (elsewhere it is made).
QuantizedTensor quantizeDequantizeColumns(const torch::Tensor& x, GemmFormat format, GemmRole role);

// A GEMM operand as a format's GEMM takes it: the quantized values without
// the tensor scale, which the product applies to its result (fp8: the
// e4m3 / e5m2 values; NVFP4: e2m1 times the e4m3 block scale; MX: the
// values, whose E8M0 scales are powers of two). bf16 holds every one of
// them exactly, but MX values under 2^-126 (bf16 subnormals) in blocks of
// scale code 0-2, which round to the nearest multiple of 2^-133.
struct GemmOperand {
  torch::Tensor values;  // `dtype` (bf16 or fp32), x's shape
  // fp32 scalar on x's device that the values times the scale dequantize
  // with: fp8 1 / tensor scale (torchao's _scaled_mm scale); NVFP4 the fp32
  // tensor scale; MX 1.
  torch::Tensor scale;
  torch::Tensor blockScales;  // as QuantizedTensor's
  torch::Tensor tensorScale;  // as QuantizedTensor's
};

// The same quantization as quantizeDequantize / quantizeDequantizeColumns
// (the same codes and scales), as a GEMM operand in `dtype`.
GemmOperand quantizeForGemm(const torch::Tensor& x, GemmFormat format, GemmRole role, torch::ScalarType dtype);
// `tensorScaleOfX`, if defined, is the tensorScale an earlier quantization
// of this same x in this format and role gave (its rows: quantizeForGemm):
// taken instead of reading x for its amax again.
GemmOperand quantizeForGemmColumns(const torch::Tensor& x, GemmFormat format, GemmRole role,
                                   torch::ScalarType dtype, const torch::Tensor& tensorScaleOfX = {});

}  // namespace plab
