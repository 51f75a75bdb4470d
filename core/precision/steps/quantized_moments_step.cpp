// Glue between torch tensors and the quantized-moment kernel
// (kernels/quantized_adamw.h): torchao's fp32 scalars computed with the
// same torch ops torchao's step uses, raw pointers, the step terms.
#include <cmath>

#include "precision/dynamic_tree_code.h"
#include "precision/kernels/dynamic_tree_4bit.h"
#include "precision/kernels/dynamic_tree_8bit.h"
#include "precision/kernels/quantized_adamw.h"
#include "precision/steps/adamw_step.h"
#include "util/errors.h"

#ifdef PLAB_HAVE_CUDA_KERNELS
#include <c10/cuda/CUDAStream.h>

#include <map>
#include <mutex>
#include <utility>
#endif

namespace plab::steps {
namespace {

#ifdef PLAB_HAVE_CUDA_KERNELS
// A code table (built once on the CPU, dynamic_tree_code.h) on a CUDA
// device, copied once per device and kept for the process.
template <typename T>
const T* onDevice(const torch::Tensor& table, const torch::Device& device) {
  static std::mutex mutex;
  static std::map<std::pair<const void*, int>, torch::Tensor> copies;
  const std::lock_guard<std::mutex> lock(mutex);
  torch::Tensor& copy = copies[{table.data_ptr(), device.index()}];
  if (!copy.defined()) copy = table.to(device);
  return copy.data_ptr<T>();
}
#endif

// torchao's scalars as its torch.compile'd step computes them (inductor's
// generated CPU code: fp32 operations, powf for beta^step): lr and the step
// count are fp32 tensors, the Python floats become fp32 constants.
kernels::LerpWeight lerpWeightOf(double beta) {
  const double weight = 1 - beta;
  const bool fromEnd = weight >= 0.5 || weight <= -0.5;
  return {static_cast<float>(fromEnd ? -(1.0 - weight) : weight), fromEnd};
}

kernels::TorchaoScalars torchaoScalarsOf(const StepScalars& s) {
  const float lr = static_cast<float>(s.lr);
  const float step = static_cast<float>(s.step);
  kernels::TorchaoScalars k;
  k.lrTimesDecay = lr * static_cast<float>(s.weightDecay);
  k.lr = lr;
  k.m = lerpWeightOf(s.beta1);
  k.v = lerpWeightOf(s.beta2);
  k.biasCorrection1 = 1.0f - std::pow(static_cast<float>(s.beta1), step);
  k.sqrtBiasCorrection2 = std::sqrt(1.0f - std::pow(static_cast<float>(s.beta2), step));
  k.eps = static_cast<float>(s.eps);
  return k;
}

kernels::WeightRule ruleOf(WeightWrite write) {
  switch (write) {
    case WeightWrite::Kahan: return kernels::WeightRule::Kahan;
    case WeightWrite::Stochastic: return kernels::WeightRule::Stochastic;
    case WeightWrite::Nearest: break;
  }
  return kernels::WeightRule::Nearest;
}

}  // namespace

bool quantizedMomentsQuantize(int64_t numel, MomentPrecision store) {
  return store == MomentPrecision::Dynamic4bit ? kernels::dynamicTree4Quantizes(numel)
                                               : kernels::dynamicTreeQuantizes(numel);
}

int64_t quantizedMomentsBlock(MomentPrecision store) {
  return store == MomentPrecision::Dynamic4bit ? kernels::kDynamicTree4Block : kernels::kDynamicTreeBlock;
}

torch::Tensor quantizedMomentsStep(ParamState& p, const StepScalars& s, WeightWrite write, MomentPrecision store,
                                   const FusedExtras& extras) {
#ifdef PLAB_HAVE_CUDA_KERNELS
  const bool onCuda = p.param.is_cuda();
#else
  const bool onCuda = false;
#endif
  if ((!p.param.is_cpu() && !onCuda) || !p.param.is_contiguous())
    throw TrainingError("adamw.moments \"" + momentPrecisionId(store) +
                        "\" runs on contiguous CPU parameters, or CUDA ones in a build with the CUDA kernels");
  const bool fourBit = store == MomentPrecision::Dynamic4bit;
  const bool fp32 = p.param.scalar_type() == torch::kFloat32;
  const torch::Tensor grad = p.grad.to(p.param.scalar_type()).contiguous();
  kernels::QuantizedAdamWArgs a;
  a.n = p.param.numel();
  a.fp32Weights = fp32;
  a.rule = ruleOf(write);
  a.param = p.param.data_ptr();
  a.grad = grad.data_ptr();
  a.m = p.m.data_ptr();
  a.v = p.v.data_ptr();
  if (p.m.scalar_type() == torch::kUInt8) {
    a.layout = fourBit                          ? kernels::MomentLayout::DynamicTree4bit
               : store == MomentPrecision::Fp8 ? kernels::MomentLayout::Fp8E4m3
                                               : kernels::MomentLayout::DynamicTree8bit;
    a.mScale = p.mScale.data_ptr<float>();
    a.vScale = p.vScale.data_ptr<float>();
  } else {
    a.layout = p.m.scalar_type() == torch::kFloat32 ? kernels::MomentLayout::PlainFp32 : kernels::MomentLayout::PlainBf16;
  }
  if (fourBit) {
    a.signedCode = dynamicTree4Code(true).data_ptr<float>();
    a.unsignedCode = dynamicTree4Code(false).data_ptr<float>();
    a.signedThresholds = dynamicTree4Thresholds(true).data_ptr<float>();
    a.unsignedThresholds = dynamicTree4Thresholds(false).data_ptr<float>();
  } else {
    a.signedCode = dynamicTreeCode(true).data_ptr<float>();
    a.unsignedCode = dynamicTreeCode(false).data_ptr<float>();
    a.signedStarts = dynamicTreeStarts(true).data_ptr<uint8_t>();
    a.unsignedStarts = dynamicTreeStarts(false).data_ptr<uint8_t>();
    a.signedThresholds = dynamicTreeThresholds(true).data_ptr<float>();
    a.unsignedThresholds = dynamicTreeThresholds(false).data_ptr<float>();
    a.signedCodeStarts = dynamicTreeCodeStarts(true).data_ptr<uint8_t>();
    a.unsignedCodeStarts = dynamicTreeCodeStarts(false).data_ptr<uint8_t>();
  }
  if (a.rule == kernels::WeightRule::Kahan && !fp32) a.comp = reinterpret_cast<uint16_t*>(p.comp.data_ptr<at::BFloat16>());
  a.s = torchaoScalarsOf(s);
  a.random = extras.random;
  if (extras.windowSum.defined()) {
    a.windowSum = extras.windowSum.data_ptr<double>();
    a.windowStride = extras.windowStride;
  }
#ifdef PLAB_HAVE_CUDA_KERNELS
  if (onCuda) {
    // The tables the kernel reads, on the device (it searches the 8-bit
    // thresholds itself: no bucket starts).
    const torch::Device device = p.param.device();
    a.signedCode = onDevice<float>(fourBit ? dynamicTree4Code(true) : dynamicTreeCode(true), device);
    a.unsignedCode = onDevice<float>(fourBit ? dynamicTree4Code(false) : dynamicTreeCode(false), device);
    a.signedThresholds = fourBit ? nullptr : onDevice<float>(dynamicTreeThresholds(true), device);
    a.unsignedThresholds = fourBit ? nullptr : onDevice<float>(dynamicTreeThresholds(false), device);
    a.signedStarts = a.unsignedStarts = a.signedCodeStarts = a.unsignedCodeStarts = nullptr;
    const auto f64 = torch::TensorOptions().dtype(torch::kFloat64).device(device);
    torch::Tensor terms = extras.stats ? torch::zeros({5}, f64) : torch::Tensor();
    const torch::Tensor errors = extras.momentErrors ? torch::zeros({4}, f64) : torch::Tensor();
    const auto stream = c10::cuda::getCurrentCUDAStream(device.index()).stream();
    kernels::quantizedAdamWCuda(a, extras.stats ? terms.data_ptr<double>() : nullptr,
                                extras.momentErrors ? errors.data_ptr<double>() : nullptr, stream);
    if (extras.momentErrors) {  // read back each step the window is open (a host sync)
      const torch::Tensor e = errors.cpu();
      const double* d = e.data_ptr<double>();
      kernels::MomentErrorSums step;
      step.mErrorSq = d[0];
      step.mSq = d[1];
      step.vErrorSq = d[2];
      step.vSq = d[3];
      extras.momentErrors->add(step);
    }
    if (extras.stats) terms[4].fill_(static_cast<double>(a.n));
    return terms;
  }
#endif
  kernels::StepSums sums;
  kernels::quantizedAdamWCpu(a, extras.stats ? &sums : nullptr, extras.momentErrors);
  if (!extras.stats) return torch::Tensor();
  return torch::tensor({sums.intendedNonZero, sums.roundedAway, sums.intendedSq, sums.changeSq, static_cast<double>(a.n)},
                       torch::TensorOptions().dtype(torch::kFloat64));
}

torch::Tensor dequantizedMoment(const torch::Tensor& stored, const torch::Tensor& scale, bool isSigned,
                                MomentPrecision store, at::IntArrayRef shape) {
  if (stored.scalar_type() != torch::kUInt8) return stored.to(torch::kFloat32);
  if (store == MomentPrecision::Fp8)  // torchao: codes.float() * scale, per block
    return (stored.view(torch::kFloat8_e4m3fn).to(torch::kFloat32).view({scale.numel(), -1}) * scale.view({-1, 1}))
        .view(shape);
  torch::Tensor codes = stored.to(torch::kLong);
  if (store == MomentPrecision::Dynamic4bit)  // unpacked as torchao's dequantize: the high half first
    codes = torch::stack({codes.bitwise_right_shift(4), codes.bitwise_and(15)}, -1);
  const torch::Tensor table =
      (store == MomentPrecision::Dynamic4bit ? dynamicTree4Code(isSigned) : dynamicTreeCode(isSigned)).to(stored.device());
  const torch::Tensor values = table.index({codes.flatten()}).view({scale.numel(), -1}) * scale.view({-1, 1});
  return values.view(shape);
}

}  // namespace plab::steps
