#pragma once
// Statistics of the quantized GEMM operands (GemmOperandStats), measured on
// the steps a trainer arms the collector for; the quantized linear layers
// hand it each operand as they quantize it.
#include <torch/torch.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "formats/gemm_format.h"
#include "formats/gemm_operand_stats.h"

namespace plab {

// x: the operand as it was quantized (reduction dimension last), q what
// quantizeDequantize(x, format, role) returned. One pass on the CPU; a GPU
// operand is copied to the CPU first (statistics steps only).
GemmOperandStats measureQuantizedOperand(const torch::Tensor& x, const QuantizedTensor& q, GemmFormat format,
                                         GemmRole role);
// The same from the GEMM operand quantizeForGemm(x, format, role, ...)
// returned: its dequantized values, recomputed element by element from it
// (the operand divided by the fp8 tensor scale; NVFP4's over its block
// scale, times tensor scale x block scale), are quantizeDequantize's bit
// for bit, so the figures are equal.
GemmOperandStats measureGemmOperand(const torch::Tensor& x, const GemmOperand& op, GemmFormat format,
                                    GemmRole role);

class GemmStatsCollector {
 public:
  void arm();                                   // collect from now on (drops anything held)
  std::vector<GemmOperandStats> disarm();       // stop; what was collected, in recording order
  bool armed() const { return armed_.load(std::memory_order_relaxed); }
  // Measures and keeps the operand unless this layer and role already have an
  // entry since arm() (gradient accumulation: the first micro-batch's).
  void record(const std::string& layer, GemmRole role, GemmFormat format, const torch::Tensor& x,
              const QuantizedTensor& q);
  void record(const std::string& layer, GemmRole role, GemmFormat format, const torch::Tensor& x,
              const GemmOperand& op);

 private:
  void recordOnce(const std::string& layer, GemmRole role, const std::function<GemmOperandStats()>& measure);

  std::atomic<bool> armed_{false};
  std::mutex mutex_;
  std::set<std::pair<std::string, GemmRole>> seen_;
  std::vector<GemmOperandStats> stats_;
};

}  // namespace plab
