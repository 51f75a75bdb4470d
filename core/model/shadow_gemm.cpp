#include "model/shadow_gemm.h"

#include "formats/gemm_format.h"
#include "formats/gemm_stats.h"
#include "model/quantized_linear.h"
#include "util/cpu_time.h"

namespace plab {

void ShadowGemm::arm() {
  std::lock_guard<std::mutex> lock(mutex_);
  seen_.clear();
  stats_.clear();
  armed_.store(true);
}

std::vector<GemmOperandStats> ShadowGemm::disarm() {
  std::lock_guard<std::mutex> lock(mutex_);
  armed_.store(false);
  seen_.clear();
  return std::move(stats_);
}

void ShadowGemm::record(const std::string& layer, const torch::Tensor& x, const torch::Tensor& weight) {
  if (!armed()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!seen_.insert(layer).second) return;
  const double start = processCpuSeconds();
  torch::NoGradGuard noGrad;
  // As quantizedLinear sees them: x in the weight's dtype, both with the
  // reduction dimension (in-features) last.
  const torch::Tensor x2d = x.detach().to(weight.scalar_type()).reshape({-1, x.size(-1)}).contiguous();
  const torch::Tensor w = weight.detach().contiguous();
  for (GemmFormat f : formats_) {
    for (const auto& [role, operand] : {std::pair{GemmRole::Input, x2d}, std::pair{GemmRole::Weight, w}}) {
      GemmOperandStats s = measureQuantizedOperand(operand, quantizeDequantize(operand, f, role), f, role);
      s.layer = layer;
      stats_.push_back(std::move(s));
    }
  }
  cpuSeconds_ += processCpuSeconds() - start;
}

double ShadowGemm::takeCpuSeconds() {
  std::lock_guard<std::mutex> lock(mutex_);
  const double s = cpuSeconds_;
  cpuSeconds_ = 0;
  return s;
}

void attachShadowGemm(torch::nn::Module& model, ShadowGemm* shadow) {
  forEachGemmSlot(model, [shadow](GemmSlot& slot) { slot.shadow = shadow; });
}

}  // namespace plab
