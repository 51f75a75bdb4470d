#pragma once
// The number format a Linear layer's GEMMs are simulated in, and the fake
// quantization that simulates it: each GEMM operand is quantized and
// dequantized back to fp32 (bit-exact with torchao's reference quantizers),
// and the product is then taken in fp32. Simulated, not run on fp8 or fp4
// tensor cores. README's "GEMM formats" table says what each one computes.
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

}  // namespace plab
