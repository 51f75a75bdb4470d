#pragma once
// The GEMM format one matrix product of a model runs in (Linear, Conv1D, the
// tied head), set when a plan is applied (applyGemmFormats), and where its
// operands' statistics go on the steps that measure them.
#include <string>

#include "formats/gemm_format_id.h"

namespace plab {

class GemmStatsCollector;  // formats/gemm_stats.h
class ShadowGemm;          // model/shadow_gemm.h

struct GemmSlot {
  GemmFormat format = GemmFormat::Bf16;  // bf16: today's product in the layer's dtype, bit for bit
  std::string layer;                     // module path, as statistics name it
  GemmStatsCollector* stats = nullptr;   // not owned; null: no statistics
  ShadowGemm* shadow = nullptr;          // not owned; null: no shadow formats (bf16 products only)
};

}  // namespace plab
