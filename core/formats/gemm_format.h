#pragma once
// The number format a Linear layer's GEMMs are simulated in, and the fake
// quantization that simulates it: each GEMM operand is quantized and
// dequantized back to fp32 (bit-exact with torchao's reference quantizers),
// and the product is then taken in fp32. Simulated, not run on fp8 or fp4
// tensor cores. README's "GEMM formats" table says what each one computes.
#include <torch/torch.h>

#include <string>
#include <vector>

namespace plab {

enum class GemmFormat {
  Bf16,     // "bf16": operands rounded to bf16 (today's GEMMs)
  Fp8E4m3,  // "fp8-e4m3": per-tensor current scaling; e4m3 forward, e5m2 output gradient
  Fp8E5m2,  // "fp8-e5m2": per-tensor current scaling; e5m2 everywhere
  Mxfp8,    // "mxfp8": e4m3 elements, 32-element blocks, E8M0 scales
  Mxfp4,    // "mxfp4": e2m1 elements, 32-element blocks, E8M0 scales
  Nvfp4,    // "nvfp4": e2m1 elements, 16-element blocks, e4m3 scales, fp32 tensor scale
};

// Which operand of a Linear's three GEMMs a tensor is.
enum class GemmRole { Input, Weight, GradOutput };

const std::vector<GemmFormat>& allGemmFormats();
std::string gemmFormatId(GemmFormat f);              // "bf16", "fp8-e4m3", ...
GemmFormat gemmFormatFromId(const std::string& id);  // throws ConfigError listing the ids

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

}  // namespace plab
