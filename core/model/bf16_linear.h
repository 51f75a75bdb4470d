#pragma once
// y = x W^T (+ b) for every matrix product of the models (Linear, GPT-2's
// Conv1D, the tied head), with the bf16 semantics of model.to(torch.bfloat16):
// bf16 operands, fp32 accumulation, result rounded to bf16.
//
// On a CPU without native bf16 instructions (no AVX512-BF16, no AMX) LibTorch's
// bf16 matrix products run 40-100x slower than fp32 (0.4-1.3 GFLOP/s against
// 28-64 measured under ONEDNN_MAX_CPU_ISA=AVX2). There the same products run
// as fp32 kernels on upcast bf16 operands, rounded to bf16 once: the same
// values up to the order of the fp32 accumulation. Forward and backward both
// (a custom autograd function that saves the bf16 operands, not fp32 copies).
#include <torch/torch.h>

#include <string>

namespace plab {

enum class Bf16GemmPath {
  Native,  // LibTorch's own bf16 kernels (CUDA, or a CPU with AVX512-BF16 / AMX)
  Upcast,  // fp32 kernels on upcast bf16 operands, one rounding to bf16
};

// The CPU path, chosen once from the CPU's instructions; the environment
// variable PLAB_BF16_GEMM=native|upcast overrides it. CUDA tensors always take
// the native path.
Bf16GemmPath cpuBf16GemmPath();
void setCpuBf16GemmPath(Bf16GemmPath path);  // tests and benches
// One line for the run log and run_info.json, e.g.
// "native (AVX512-BF16)" or "fp32 kernels on upcast bf16 operands (no native bf16 on this CPU)".
std::string describeCpuBf16GemmPath();

// y = x W^T + b in weight's dtype (x is cast to it; bias may be undefined).
torch::Tensor linearInWeightDtype(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias);

}  // namespace plab
