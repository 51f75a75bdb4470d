#pragma once
// torch.optim.AdamW's default for-loop step (foreach=False, the CPU default)
// on bf16 parameters, gradients and moments, bit for bit: the fast form of
// the "bf16" recipe's default step (adamw.torch_step "for-loop"), one pass
// per element instead of eight tensor operations. Torch-free.
//
// Python's _single_tensor_adam runs, on bf16 tensors,
//   param.mul_(1 - lr * wd)                      (only when wd != 0)
//   exp_avg.lerp_(grad, 1 - beta1)
//   exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
//   denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
//   param.addcdiv_(exp_avg, denom, value=-step_size)
// and every one of those ATen CPU kernels upcasts its bf16 inputs to fp32,
// computes in fp32 with the Python floats as fp32 numbers, and rounds its
// result to bf16 (nearest, ties to even): eight bf16 roundings per element
// (torch_forloop_bf16_element.h). Read from ATen's source (BinaryOpsKernel,
// LerpKernel, PointwiseOpsKernel, UnaryOpsKernel, vec512_bfloat16.h) and
// confirmed element by element against the tensor-op form
// (steps::torchOptimAdamwInPlace) in the linked LibTorch 2.13
// (test_torch_forloop_bf16). ATen's AVX2 and AVX-512 kernels are compiled
// with FMA contraction: lerp is fma(w, g - m, m) and addcmul
// fma((1 - beta2) g, g, v) in their vectorised bodies and scalar remainders
// alike, so the result does not depend on where torch's remainders fall (the
// tensor's size, the thread count). ATen's portable kernels (a CPU without
// AVX2, ATEN_CPU_CAPABILITY=default) fuse nothing and round differently:
// there the tensor-op form runs (steps::torchForloopBf16Runs). NaN payloads
// may differ from torch's (which writes 0xFFFF from its vectorised body and
// 0x7FC0 from its remainder): the NaN is the same.
#include <cstdint>

#include "precision/kernels/fused_adamw.h"

namespace plab::kernels {

// The fp32 values ATen's kernels take from Python's double arguments.
struct TorchForloopBf16Scalars {
  float decay = 1;          // float(1 - lr * wd); exactly 1 without weight decay (torch then skips the mul)
  float lerpWeight = 0.1f;  // float(1 - beta1)
  bool lerpSmall = true;    // |lerpWeight| < 0.5: m + w (g - m), else g - (1 - w) (g - m)
  float beta2 = 0.999f, oneMinusBeta2 = 0.001f;
  float sqrtBiasCorrection2 = 1;  // float((1 - beta2^t) ** 0.5)
  float eps = 1e-8f;       // bf16(float(eps)): add_'s scalar, cast to the tensor's dtype
  float eps32 = 1e-8f;     // float(eps): the same add_ on the fp32 reference's tensors
  float negStepSize = 0;  // float(-lr / (1 - beta1^t))
};

struct TorchForloopBf16Args {
  int64_t n = 0;
  uint16_t* param = nullptr;  // bf16 bits, updated in place
  const uint16_t* grad = nullptr;
  uint16_t* m = nullptr;  // bf16 moments, updated in place
  uint16_t* v = nullptr;
  TorchForloopBf16Scalars s;
  // The update window's sample: with sampleStride > 0, element i with
  // i % sampleStride == 0 is copied, as it was before the step, to
  // element i / sampleStride of these (bf16 bits), while its block is in cache.
  int64_t sampleStride = 0;
  uint16_t* sampleParam = nullptr;
  uint16_t* sampleGrad = nullptr;
  uint16_t* sampleM = nullptr;
  uint16_t* sampleV = nullptr;
  // The statistics' fp32 reference (steps::fp32IntendedWeights: torch's
  // same operations on fp32 copies), n floats each, or null: the weight
  // before the step and after it, and, before torch's fp32 square root
  // (MKL's, which this does not reproduce: the caller takes it on refV in
  // place), the fp32 weight after decay, m and v. Then
  // torchForloopFp32ReferenceEndCpu turns refWeight into the intended weights.
  float* refBefore = nullptr;
  float* refAfter = nullptr;
  float* refWeight = nullptr;
  float* refM = nullptr;
  float* refV = nullptr;
};

// Steps elements [0, n) on torch's threads, in fixed blocks.
void torchForloopBf16Cpu(const TorchForloopBf16Args& args);

// refWeight = refWeight + (-step * refM) / (refV / sqrt(1 - beta2^t) + eps)
// in fp32 as torch's ops round it, refV holding torch's square root of v.
void torchForloopFp32ReferenceEndCpu(const TorchForloopBf16Args& args);

}  // namespace plab::kernels
