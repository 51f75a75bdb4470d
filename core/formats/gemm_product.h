#pragma once
// The product of two GEMM operands (gemm_format.h's GemmOperand) in a bf16
// layer, as a format's GEMM computes it: the operands' values (exact in
// bf16) multiplied with fp32 accumulation, times the two operands' scales
// (fp8: 1/s each; NVFP4: the tensor scales; MX: 1) and plus the bias in
// fp32, rounded to bf16 once — what torch._scaled_mm's epilogue does. One
// at::addmm with alpha = scale_a * scale_b: LibTorch applies alpha to the
// fp32 accumulator before its one rounding (test_quantized_linear::
// addmmScalesBeforeItsOneRounding). docs/formats.md says how each
// format differs from hardware.
#include <torch/torch.h>

#include "formats/gemm_format.h"

namespace plab {

// a [m, k] times b [k, n] (values of opA and opB, or views of them; bf16,
// or fp32 holding the same values where the CPU has no native bf16
// products, then rounded to bf16 from fp32); bias [n] or undefined. Returns
// bf16 [m, n].
torch::Tensor bf16GemmProduct(const torch::Tensor& a, const torch::Tensor& b, const GemmOperand& opA,
                              const GemmOperand& opB, const torch::Tensor& bias);

}  // namespace plab
