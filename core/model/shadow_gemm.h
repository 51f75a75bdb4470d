#pragma once
// What candidate GEMM formats would do to the operands of products that run
// in bf16, measured in shadow (the advisor's shadow run, issue 21.1): on the
// steps a trainer arms it, every Linear, Conv1D and tied head whose product
// runs in bf16 hands over its input and weight, which are quantized in each
// candidate format (and thrown away) and measured as the quantized layers
// measure theirs (formats/gemm_stats.h). The product itself is untouched: a
// run trains bit for bit as without it. The output gradient is not shadowed.
#include <torch/torch.h>

#include <atomic>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "formats/gemm_operand_stats.h"
#include "model/gemm_slot.h"

namespace plab {

class ShadowGemm {
 public:
  explicit ShadowGemm(std::vector<GemmFormat> formats) : formats_(std::move(formats)) {}
  void arm();                              // collect from now on (drops anything held)
  std::vector<GemmOperandStats> disarm();  // stop; what was collected, in recording order
  bool armed() const { return armed_.load(std::memory_order_relaxed); }
  // x as the layer receives it ([..., in]), weight [out, in]. Each layer is
  // measured once per arm() (gradient accumulation: the first micro-batch).
  void record(const std::string& layer, const torch::Tensor& x, const torch::Tensor& weight);
  // The process CPU time record() took since the last call (the shadow's cost).
  double takeCpuSeconds();

 private:
  double cpuSeconds_ = 0;
  std::vector<GemmFormat> formats_;
  std::atomic<bool> armed_{false};
  std::mutex mutex_;
  std::set<std::string> seen_;
  std::vector<GemmOperandStats> stats_;
};

// The layers' hook, before their product: records when the slot has an armed
// shadow and its product runs in bf16.
inline void recordShadowGemm(const torch::Tensor& x, const torch::Tensor& weight, const GemmSlot& slot) {
  if (slot.shadow && slot.format == GemmFormat::Bf16 && slot.shadow->armed()) slot.shadow->record(slot.layer, x, weight);
}

// Points every GEMM slot of `model` at `shadow` (null: none).
void attachShadowGemm(torch::nn::Module& model, ShadowGemm* shadow);

}  // namespace plab
