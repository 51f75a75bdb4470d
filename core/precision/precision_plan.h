#pragma once
// Which modules hold bf16 parameters. A plan is a preset plus per-module
// overrides (an override applies to the module's whole subtree; deeper
// overrides win). Torch-free; resolved against a ModuleNode tree. The plan
// also names the simulated GEMM format of every matrix product (Linear,
// Conv1D, the tied head): a plan-wide default plus subtree overrides.
#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "formats/gemm_format_id.h"
#include "model/module_tree.h"

namespace plab {

enum class LayerPrecision { Fp32, Bf16 };

enum class PlanPreset {
  AllFp32,
  LinearBf16,  // the seed default: Linear/Conv1D -> bf16, norms and embeddings per flags
  AllBf16,
};

struct PrecisionPlan {
  PlanPreset preset = PlanPreset::LinearBf16;
  bool norms_bf16 = false;       // LinearBf16 only: LayerNorm/RMSNorm too
  bool embeddings_bf16 = false;  // LinearBf16 only: Embedding too (and a tied lm_head)
  std::map<std::string, LayerPrecision> overrides;  // module path -> precision for its subtree
  // JSON "gemm_format" and "gemm_formats" (absent: bf16, today's GEMMs in each
  // layer's own dtype). Unlike a precision override, a GEMM override may name
  // the tied head ("lm_head"): the format belongs to the product, not the weight.
  GemmFormat gemm_format = GemmFormat::Bf16;
  std::map<std::string, GemmFormat> gemm_formats;  // module path -> GEMM format for its subtree

  // Precision of every module that owns parameters (path -> precision).
  std::map<std::string, LayerPrecision> resolve(const ModuleNode& tree) const;
  void setSubtree(const std::string& modulePath, LayerPrecision p) { overrides[modulePath] = p; }

  // GEMM format of every module with a matrix product (Linear/Conv1D types
  // with parameters, and a tied head): path -> format. Throws ConfigError
  // when a gemm_formats path names no module of the tree.
  std::map<std::string, GemmFormat> resolveGemmFormats(const ModuleNode& tree) const;
  void setGemmSubtree(const std::string& modulePath, GemmFormat f) { gemm_formats[modulePath] = f; }
  bool usesLowPrecisionGemms() const;  // any format other than bf16 named
};

std::string planPresetId(PlanPreset p);   // "all-fp32", "linear-bf16", "all-bf16"
PlanPreset planPresetFromId(const std::string& id);  // throws ConfigError
nlohmann::json toJson(const PrecisionPlan& p);
PrecisionPlan precisionPlanFromJson(const nlohmann::json& j);  // throws ConfigError

// Number of parameter elements the resolved plan puts in bf16.
int64_t bf16ParameterCount(const ModuleNode& tree, const std::map<std::string, LayerPrecision>& resolved);

}  // namespace plab
