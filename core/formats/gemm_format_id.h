#pragma once
// The GEMM format ids, torch-free: plans, run configs and the UI's layer tree
// name formats through this header; gemm_format.h adds the quantizers.
#include <string>
#include <vector>

namespace plab {

enum class GemmFormat {
  Bf16,     // "bf16": operands rounded to bf16 (today's GEMMs)
  Fp8E4m3,  // "fp8-e4m3": per-tensor current scaling; e4m3 forward, e5m2 output gradient
  Fp8E5m2,  // "fp8-e5m2": per-tensor current scaling; e5m2 everywhere
  Mxfp8,    // "mxfp8": e4m3 elements, 32-element blocks, E8M0 scales
  Mxfp4,    // "mxfp4": e2m1 elements, 32-element blocks, E8M0 scales
  Nvfp4,    // "nvfp4": e2m1 elements, 16-element blocks, e4m3 scales, fp32 tensor scale
};

// Which operand of a Linear's three GEMMs a tensor is.
enum class GemmRole { Input, Weight, GradOutput };

const std::vector<GemmFormat>& allGemmFormats();
std::string gemmFormatId(GemmFormat f);              // "bf16", "fp8-e4m3", ...
GemmFormat gemmFormatFromId(const std::string& id);  // throws ConfigError listing the ids
std::string gemmRoleId(GemmRole r);                  // "input", "weight", "grad_output"

}  // namespace plab
