#include "model/bf16_linear.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace plab {
namespace {

#if defined(__x86_64__) || defined(__i386__)
// AVX512-BF16 (CPUID.7.1:EAX[5]) with the OS saving the AVX-512 state, or
// AMX-BF16 (CPUID.7.0:EDX[22]): what oneDNN's fast bf16 products need.
bool cpuHasNativeBf16() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_max(0, nullptr) < 7) return false;
  __cpuid_count(7, 0, a, b, c, d);
  const bool amxBf16 = (d >> 22) & 1u;
  __cpuid_count(7, 1, a, b, c, d);
  const bool avx512Bf16 = (a >> 5) & 1u;
  __cpuid(1, a, b, c, d);
  const bool osSavesState = (c >> 27) & 1u;  // OSXSAVE
  if (!osSavesState) return false;
  unsigned lo = 0, hi = 0;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  (void)hi;
  const bool avx512State = (lo & 0xE6u) == 0xE6u;  // XMM, YMM, opmask, ZMM halves
  return (avx512Bf16 && avx512State) || amxBf16;
}
#else
bool cpuHasNativeBf16() { return true; }  // no cheaper path known elsewhere
#endif

const char* forcedByEnvironment() {
  const char* env = std::getenv("PLAB_BF16_GEMM");
  return env && (std::strcmp(env, "native") == 0 || std::strcmp(env, "upcast") == 0) ? env : nullptr;
}

Bf16GemmPath initialPath() {
  if (const char* env = forcedByEnvironment()) return std::strcmp(env, "native") == 0 ? Bf16GemmPath::Native : Bf16GemmPath::Upcast;
  return cpuHasNativeBf16() ? Bf16GemmPath::Native : Bf16GemmPath::Upcast;
}

std::atomic<Bf16GemmPath>& currentPath() {
  static std::atomic<Bf16GemmPath> path{initialPath()};
  return path;
}

std::atomic<bool>& forcedInCode() {
  static std::atomic<bool> forced{false};
  return forced;
}

// Why the path was chosen (describeCpuBf16GemmPath); "" before a run chose it.
std::mutex measurementMutex;
std::string& measurementNote() {
  static std::string note;
  return note;
}

// The upcast product: saves the bf16 operands and upcasts again in backward,
// so the autograd graph holds what the native bf16 product would hold. Two
// functions, with and without a bias (autograd takes no undefined input).
torch::Tensor upcastForward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& weight,
                            const torch::Tensor& bias) {
  ctx->save_for_backward({x, weight});
  const torch::Tensor bias32 = bias.defined() ? bias.to(torch::kFloat32) : bias;
  return at::linear(x.to(torch::kFloat32), weight.to(torch::kFloat32), bias32).to(torch::kBFloat16);
}

torch::autograd::variable_list upcastBackward(torch::autograd::AutogradContext* ctx, const torch::Tensor& grad,
                                              bool withBias) {
  const auto saved = ctx->get_saved_variables();
  const torch::Tensor x32 = saved[0].to(torch::kFloat32), w32 = saved[1].to(torch::kFloat32);
  const torch::Tensor g32 = grad.to(torch::kFloat32);
  const torch::Tensor g2d = g32.reshape({-1, g32.size(-1)});
  torch::autograd::variable_list grads = {
      torch::matmul(g32, w32).to(torch::kBFloat16),
      torch::matmul(g2d.t(), x32.reshape({-1, x32.size(-1)})).to(torch::kBFloat16)};
  if (withBias) grads.push_back(g2d.sum(0).to(torch::kBFloat16));
  return grads;
}

struct UpcastBf16Linear : public torch::autograd::Function<UpcastBf16Linear> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight) {
    return upcastForward(ctx, x, weight, {});
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    return upcastBackward(ctx, grads[0], false);
  }
};

struct UpcastBf16LinearWithBias : public torch::autograd::Function<UpcastBf16LinearWithBias> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight, const torch::Tensor& bias) {
    return upcastForward(ctx, x, weight, bias);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    return upcastBackward(ctx, grads[0], true);
  }
};

}  // namespace

Bf16GemmPath cpuBf16GemmPath() { return currentPath().load(); }

Bf16GemmPath cpuBf16GemmDefault() { return cpuHasNativeBf16() ? Bf16GemmPath::Native : Bf16GemmPath::Upcast; }

bool cpuBf16GemmPathForced() { return forcedInCode().load() || forcedByEnvironment() != nullptr; }

void setCpuBf16GemmPath(Bf16GemmPath path) {
  forcedInCode().store(true);
  currentPath().store(path);
}

void setChosenCpuBf16GemmPath(Bf16GemmPath path, const std::string& why) {
  std::lock_guard<std::mutex> lock(measurementMutex);
  measurementNote() = why;
  currentPath().store(path);
}

std::string describeCpuBf16GemmPath() {
  const bool native = cpuHasNativeBf16();
  if (!cpuBf16GemmPathForced()) {
    std::lock_guard<std::mutex> lock(measurementMutex);
    if (!measurementNote().empty())
      return std::string(cpuBf16GemmPath() == Bf16GemmPath::Native ? "native bf16 kernels"
                                                                   : "fp32 kernels on upcast bf16 operands") +
             " (" + measurementNote() + ")";
  }
  if (cpuBf16GemmPath() == Bf16GemmPath::Native)
    return native ? (cpuBf16GemmPathForced() ? "native bf16 kernels (forced by PLAB_BF16_GEMM or the run's settings)"
                                             : "native bf16 kernels (the CPU has AVX512-BF16 or AMX)")
                  : "native bf16 kernels (forced by PLAB_BF16_GEMM or the run's settings; this CPU has no native bf16: slow path)";
  return native ? "fp32 kernels on upcast bf16 operands (forced by PLAB_BF16_GEMM or the run's settings)"
                : "fp32 kernels on upcast bf16 operands (this CPU has no native bf16 instructions)";
}

torch::Tensor bf16LinearOnPath(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
                               Bf16GemmPath path) {
  if (path == Bf16GemmPath::Upcast)
    return bias.defined() ? UpcastBf16LinearWithBias::apply(x, weight, bias) : UpcastBf16Linear::apply(x, weight);
  return at::linear(x, weight, bias);
}

torch::Tensor linearInWeightDtype(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  const auto dtype = weight.scalar_type();
  const torch::Tensor in = x.to(dtype);
  const torch::Tensor b = bias.defined() ? bias.to(dtype) : bias;
  if (dtype == torch::kBFloat16 && weight.device().is_cpu()) return bf16LinearOnPath(in, weight, b, cpuBf16GemmPath());
  // at::linear as Python's F.linear: the bias joins the product before its one
  // rounding (the C++ frontend's functional::linear adds it after a rounding).
  return at::linear(in, weight, b);
}

}  // namespace plab
