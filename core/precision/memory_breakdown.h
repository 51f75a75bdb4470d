#pragma once
// Bytes of training state. Torch-free.
#include <cstdint>

#include <nlohmann/json.hpp>

namespace plab {

struct MemoryBreakdown {
  int64_t weights = 0;      // model parameters as stored (bf16 compute copies in mixed mode)
  int64_t gradients = 0;
  int64_t moments = 0;      // AdamW m and v (quantized: their codes)
  int64_t master = 0;       // fp32 master weights (mixed mode)
  int64_t kahan = 0;        // Kahan compensation buffers
  // Quantized moments (adamw.moments "8bit", "4bit", "fp8"): the fp32 scale of each block
  // of m and of v; the codes are in `moments`.
  int64_t scales = 0;
  int64_t total() const { return weights + gradients + moments + master + kahan + scales; }
  MemoryBreakdown& operator+=(const MemoryBreakdown& o) {
    weights += o.weights;
    gradients += o.gradients;
    moments += o.moments;
    master += o.master;
    kahan += o.kahan;
    scales += o.scales;
    return *this;
  }
};

nlohmann::json toJson(const MemoryBreakdown& m);
MemoryBreakdown memoryBreakdownFromJson(const nlohmann::json& j);

// All-fp32 AdamW on the same parameter count: 16 bytes per element.
MemoryBreakdown fp32AdamWBaseline(int64_t parameterCount);

}  // namespace plab
