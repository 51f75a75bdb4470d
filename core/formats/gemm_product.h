#pragma once
// The product of two GEMM operands (gemm_format.h's GemmOperand) in a bf16
// layer, as a format's GEMM computes it: the operands' values (exact in
// bf16) multiplied with fp32 accumulation and rounded to bf16, as LibTorch's
// bf16 products (and the hardware's) do; then, for the formats with a
// tensor scale (fp8, NVFP4), that result times the two operands' scales in
// fp32, plus the bias, rounded to bf16 again. Hardware applies the scales
// before its one rounding (torch._scaled_mm's epilogue): here the result
// carries one bf16 rounding more, because LibTorch's CPU bf16 product
// returns bf16 only. README "GEMM formats" says how each format differs.
#include <torch/torch.h>

#include "formats/gemm_format.h"

namespace plab {

// Whether `format`'s products apply the operands' scales after the product.
bool productHasScales(GemmFormat format);

// `product` is the operands' values multiplied (bf16 from bf16 operands, or
// fp32 from fp32 ones, which this rounds to bf16 first: the same value up to
// the order of accumulation); it is consumed (a bf16 product is scaled in
// place). For a format without scales, the bias (if
// any) must have joined the product already; here it is rounded to bf16.
// With scales, returns bf16(fp32(product) * scale_a * scale_b + bias).
torch::Tensor finishBf16Product(torch::Tensor product, GemmFormat format, const GemmOperand& a,
                                const GemmOperand& b, const torch::Tensor& bias);

}  // namespace plab
