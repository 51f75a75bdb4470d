#include "formats/gemm_format_id.h"

#include "util/errors.h"

namespace plab {

const std::vector<GemmFormat>& allGemmFormats() {
  static const std::vector<GemmFormat> all = {GemmFormat::Bf16,  GemmFormat::Fp8E4m3, GemmFormat::Fp8E5m2,
                                              GemmFormat::Mxfp8, GemmFormat::Mxfp4,   GemmFormat::Nvfp4};
  return all;
}

std::string gemmFormatId(GemmFormat f) {
  switch (f) {
    case GemmFormat::Bf16: return "bf16";
    case GemmFormat::Fp8E4m3: return "fp8-e4m3";
    case GemmFormat::Fp8E5m2: return "fp8-e5m2";
    case GemmFormat::Mxfp8: return "mxfp8";
    case GemmFormat::Mxfp4: return "mxfp4";
    case GemmFormat::Nvfp4: return "nvfp4";
  }
  return "?";
}

GemmFormat gemmFormatFromId(const std::string& id) {
  std::string ids;
  for (GemmFormat f : allGemmFormats()) {
    if (gemmFormatId(f) == id) return f;
    ids += (ids.empty() ? "" : ", ") + gemmFormatId(f);
  }
  throw ConfigError("unknown GEMM format '" + id + "' (one of: " + ids + ")");
}

std::string gemmRoleId(GemmRole r) {
  switch (r) {
    case GemmRole::Input: return "input";
    case GemmRole::Weight: return "weight";
    case GemmRole::GradOutput: return "grad_output";
  }
  return "?";
}

}  // namespace plab
