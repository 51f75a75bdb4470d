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

// The CPU path: at first the CPU's instructions decide (cpuBf16GemmDefault),
// then each run's measurement (model/bf16_gemm_choice.h); the environment
// variable PLAB_BF16_GEMM=native|upcast, or setCpuBf16GemmPath, forces one
// and nothing is measured. CUDA tensors always take the native path.
Bf16GemmPath cpuBf16GemmPath();
Bf16GemmPath cpuBf16GemmDefault();          // native where the CPU has AVX512-BF16 or AMX
bool cpuBf16GemmPathForced();
void setCpuBf16GemmPath(Bf16GemmPath path);  // forces it: tests, benches, reproducible runs
// A run's choice, not forced: `why` ends describeCpuBf16GemmPath's line
// ("chosen by measurement: native 80.1, ...").
void setChosenCpuBf16GemmPath(Bf16GemmPath path, const std::string& why);
// One line for the run log and run_info.json, e.g. "native bf16 kernels
// (chosen by measurement: native 80.1, upcast 61.0, ...)".
std::string describeCpuBf16GemmPath();

// y = x W^T + b for bf16 x and weight on the CPU on the given path (bias
// bf16 or undefined): what linearInWeightDtype runs, and what the
// measurement times.
torch::Tensor bf16LinearOnPath(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
                               Bf16GemmPath path);

// y = x W^T + b in weight's dtype (x is cast to it; bias may be undefined).
torch::Tensor linearInWeightDtype(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias);

}  // namespace plab
