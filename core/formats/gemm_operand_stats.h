#pragma once
// What fake quantization did to one GEMM operand of one layer on one step,
// as NVIDIA Transformer Engine's precision debug tools report it. Torch-free:
// it travels in StepMetrics to metrics.jsonl ("gemm_layers") and the UI.
#include <cstdint>
#include <string>

#include "formats/gemm_format_id.h"

namespace plab {

struct GemmOperandStats {
  std::string layer;  // module path
  GemmRole role = GemmRole::Input;
  GemmFormat format = GemmFormat::Bf16;
  // Of the non-zero elements, the share that quantized to zero.
  double underflow = 0;
  // Of all elements, the share clamped at the element type's largest value:
  // its scaled magnitude would have rounded above it (e4m3 > 464, e5m2 > 59392,
  // e2m1 > 7). Per-tensor scaling never saturates; MX FLOOR scales can.
  double saturation = 0;
  // log2 max|x| - log2 of the smallest non-zero |x| (0 when there is none).
  double dynamicRangeLog2 = 0;
  double relError = 0;  // ||Q(x) - x|| / ||x|| (0 for x = 0)
  // log2 of the smallest and largest dequantization scale (what elements are
  // multiplied by): fp8 the reciprocal tensor scale, MX 2^(E8M0 - 127), NVFP4
  // the e4m3 block scale times the tensor scale; blocks that are all zero left out.
  double scaleLog2Min = 0;
  double scaleLog2Max = 0;
};

}  // namespace plab
