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
#include "precision/optimizer_mode.h"

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
  // JSON "recipes": the optimizer recipe of a subtree's bf16 layers, instead
  // of the run's mode (a bf16 recipe, modeIsLayerRecipe), so that one plan
  // can give Kahan or stochastic rounding to the layers that need it and
  // plain bf16 writes to the rest. fp32 layers step as fp32 whatever it
  // says; the fp32 and fp16 modes take none (resolveRecipes throws).
  std::map<std::string, OptimizerMode> recipes;  // module path -> recipe for its subtree
  // JSON "moments": the moment store of a subtree's layers (adamw.moments
  // per layer; the run's adamw.moments where none applies). A store applies
  // to a layer exactly as adamw.moments would (state_layout::moments): a
  // quantized store ("8bit", "4bit", "fp8") takes the fp32 layers too, as
  // torchao's optimizers do; "fp32", "bf16", "bf16-sr" leave fp32 layers'
  // fp32 moments; "default" is the layer recipe's own choice (so a subtree
  // can keep it under a quantized run-wide store). resolveMoments refuses
  // what would not apply (see there).
  std::map<std::string, MomentPrecision> moments;  // module path -> store for its subtree

  // Precision of every module that owns parameters (path -> precision).
  std::map<std::string, LayerPrecision> resolve(const ModuleNode& tree) const;
  void setSubtree(const std::string& modulePath, LayerPrecision p) { overrides[modulePath] = p; }

  // GEMM format of every module with a matrix product (Linear/Conv1D types
  // with parameters, and a tied head): path -> format. Throws ConfigError
  // when a gemm_formats path names no module of the tree.
  std::map<std::string, GemmFormat> resolveGemmFormats(const ModuleNode& tree) const;
  void setGemmSubtree(const std::string& modulePath, GemmFormat f) { gemm_formats[modulePath] = f; }
  bool usesLowPrecisionGemms() const;  // any format other than bf16 named

  // The recipe of every module that owns parameters under a run in `runMode`
  // (path -> recipe; runMode where no override applies). Throws ConfigError
  // when a recipes path names no module or the tied head, or when recipes
  // are set and runMode is fp32 or an fp16 recipe.
  std::map<std::string, OptimizerMode> resolveRecipes(const ModuleNode& tree, OptimizerMode runMode) const;
  void setRecipeSubtree(const std::string& modulePath, OptimizerMode m) { recipes[modulePath] = m; }

  // The store of every module that owns parameters and that a moments entry
  // reaches (path -> store; modules none reaches are left out: they take the
  // run's adamw.moments). Throws ConfigError when an entry names no module
  // or the tied head; when moments are set and runMode is fp32 or an fp16
  // recipe; when an entry puts a store other than "default" on a bf16 layer
  // whose recipe keeps its own moments ("bf16", "mixed": they ignore
  // adamw.moments too); and when an entry changes no layer (a non-quantized
  // store on fp32 layers only).
  std::map<std::string, MomentPrecision> resolveMoments(const ModuleNode& tree, OptimizerMode runMode) const;
  void setMomentSubtree(const std::string& modulePath, MomentPrecision p) { moments[modulePath] = p; }
};

std::string planPresetId(PlanPreset p);   // "all-fp32", "linear-bf16", "all-bf16"
PlanPreset planPresetFromId(const std::string& id);  // throws ConfigError
nlohmann::json toJson(const PrecisionPlan& p);
PrecisionPlan precisionPlanFromJson(const nlohmann::json& j);  // throws ConfigError

// Number of parameter elements the resolved plan puts in bf16.
int64_t bf16ParameterCount(const ModuleNode& tree, const std::map<std::string, LayerPrecision>& resolved);

}  // namespace plab
