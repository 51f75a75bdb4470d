#pragma once
// torch.optim.AdamW(fused=True)'s CPU step (ATen's fused Adam kernel in
// AdamW mode) for fp32 parameters and for bf16 ones, bit for bit: the fast
// form of the "fp32" and "bf16" recipes (adamw.torch_step = "fused"; see
// docs/modes.md). Torch-free.
//
// The element arithmetic (torch_fused_adamw_element.h) is ATen's, read
// from its source and confirmed element by element against LibTorch 2.13's
// vectorised kernel, which ATen registers for AVX2 and also runs on AVX-512
// CPUs (tests/reference/optimizer_vs_torch.py, tests/core/
// test_torch_fused_adamw.cpp). Under ATen's portable "default" kernels
// (ATEN_CPU_CAPABILITY=default, a CPU without AVX2) torch's own fused step
// fuses no multiply-add and rounds differently: this is not that.
// opmath fp32 (bf16 state is upcast, updated in fp32 and rounded to nearest
// once when stored; the weight update uses the unrounded moments), m by a
// fused multiply-add lerp, and v in one of two orders: torch's vectorised
// body computes fma((1 - beta2) g, g, beta2 v) and its scalar remainder
// fma(v, beta2, ((1 - beta2) g) g). Which elements its scalar remainder
// takes depends only on the tensor's size (its chunks are whole cache
// lines): the last n mod 8 of an fp32 tensor, the last n mod 16 of a bf16
// one (torchScalarTailStart).
#include <cstdint>

#include "precision/kernels/fused_adamw.h"

namespace plab::kernels {

// The fp32 values ATen's kernel derives from torch's double arguments.
struct TorchFusedScalars {
  float decay = 1;          // float(1 - lr * weight_decay); 1 without weight decay
  float lerpWeight = 0.1f;  // float(1 - beta1)
  bool lerpSmall = true;    // |lerpWeight| < 0.5: m + w (g - m), else g - (1 - w) (g - m)
  float beta2 = 0.999f, oneMinusBeta2 = 0.001f;
  float sqrtBiasCorrection2 = 1;  // float(sqrt(1 - beta2^t))
  float eps = 1e-8f;
  float negStepSize = 0;  // float(-lr / (1 - beta1^t))
};

enum class TorchParamType : int32_t { Fp32, Bf16 };

struct TorchFusedAdamWArgs {
  int64_t n = 0;
  TorchParamType type = TorchParamType::Fp32;
  // float* or uint16_t* (bf16 bits) as `type` says; m and v have the
  // parameter's dtype, as torch's state does.
  void* param = nullptr;
  const void* grad = nullptr;
  void* m = nullptr;
  void* v = nullptr;
  TorchFusedScalars s;
  int64_t scalarFrom = 0;  // first element torch's scalar remainder steps (torchScalarTailStart)
  // Update-lost window, as FusedAdamWArgs's.
  double* windowSum = nullptr;
  int64_t windowStride = 1;
};

inline int64_t torchScalarTailStart(int64_t n, TorchParamType type) {
  const int64_t width = type == TorchParamType::Fp32 ? 8 : 16;
  return n - n % width;
}

// The step's statistics (StepSums) with origin = the weight before the step
// and updated = the fp32 result before it is stored: for fp32 weights the
// intended update is the change itself. sums may be null.
void torchFusedAdamWCpu(const TorchFusedAdamWArgs& args, StepSums* sums);

}  // namespace plab::kernels
