#include "precision/precision_plan.h"

#include <functional>
#include <set>

#include "precision/json_strict.h"
#include "util/errors.h"

namespace plab {
namespace {

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }
bool startsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// The matmul-heavy layers whose weights the LinearBf16 preset puts in bf16:
// Linear, GPT-2's Conv1D, and the torch Conv*d family.
bool isLinearLike(const std::string& type) {
  return contains(type, "Linear") || startsWith(type, "Conv");
}
bool isNorm(const std::string& type) { return contains(type, "Norm"); }
bool isEmbedding(const std::string& type) { return contains(type, "Embedding"); }

LayerPrecision presetPrecision(const PrecisionPlan& plan, const std::string& type) {
  switch (plan.preset) {
    case PlanPreset::AllFp32: return LayerPrecision::Fp32;
    case PlanPreset::AllBf16: return LayerPrecision::Bf16;
    case PlanPreset::LinearBf16:
      // Norms and embeddings are checked first: their names may contain "Linear" in custom models.
      if (isNorm(type)) return plan.norms_bf16 ? LayerPrecision::Bf16 : LayerPrecision::Fp32;
      if (isEmbedding(type)) return plan.embeddings_bf16 ? LayerPrecision::Bf16 : LayerPrecision::Fp32;
      return isLinearLike(type) ? LayerPrecision::Bf16 : LayerPrecision::Fp32;
  }
  return LayerPrecision::Fp32;
}

// True when `path` is `ancestor` or lies in its subtree ("" is the root).
bool inSubtree(const std::string& path, const std::string& ancestor) {
  if (ancestor.empty()) return true;
  if (!startsWith(path, ancestor.c_str())) return false;
  return path.size() == ancestor.size() || path[ancestor.size()] == '.';
}

// The value of the deepest override whose subtree holds `path` (depth is the
// path length, since one path is a prefix of the other); null when none does.
template <typename T>
const T* deepestOverride(const std::string& path, const std::map<std::string, T>& overrides) {
  const T* best = nullptr;
  size_t bestLength = 0;
  for (const auto& [ancestor, value] : overrides) {
    if (inSubtree(path, ancestor) && (!best || ancestor.size() >= bestLength)) {
      best = &value;
      bestLength = ancestor.size();
    }
  }
  return best;
}

// Visits every module of `tree` (onNode), calling onNamed first on a module
// one of `overrides` names; then refuses an override that named none (a
// typo would otherwise change nothing): "<what> '<path>' names no module".
template <typename T, typename NamedFn, typename NodeFn>
void visitWithOverrides(const ModuleNode& tree, const std::map<std::string, T>& overrides, const std::string& what,
                        NamedFn onNamed, NodeFn onNode) {
  std::set<std::string> unused;
  for (const auto& [path, value] : overrides) unused.insert(path);
  std::function<void(const ModuleNode&)> visit = [&](const ModuleNode& node) {
    if (overrides.count(node.path)) {
      onNamed(node);
      unused.erase(node.path);
    }
    onNode(node);
    for (const ModuleNode& child : node.children) visit(child);
  };
  visit(tree);
  if (!unused.empty())
    throw ConfigError("precision plan: " + what + " '" + *unused.begin() + "' names no module of the model");
}

std::string precisionId(LayerPrecision p) { return p == LayerPrecision::Bf16 ? "bf16" : "fp32"; }

}  // namespace

std::map<std::string, LayerPrecision> PrecisionPlan::resolve(const ModuleNode& tree) const {
  std::map<std::string, LayerPrecision> out;
  visitWithOverrides(
      tree, overrides, "override",
      [](const ModuleNode& node) {
        // It would be used and change nothing: the head computes in its owner's precision.
        if (!node.tiedTo.empty())
          throw ConfigError("precision plan: override '" + node.path + "' names the tied output head, which has no "
                            "weight of its own; set '" + node.tiedTo + "' instead (the head computes in its precision)");
      },
      [&](const ModuleNode& node) {
        if (node.ownParameters == 0) return;
        const LayerPrecision* chosen = deepestOverride(node.path, overrides);
        out[node.path] = chosen ? *chosen : presetPrecision(*this, node.type);
      });
  return out;
}

std::map<std::string, GemmFormat> PrecisionPlan::resolveGemmFormats(const ModuleNode& tree) const {
  std::map<std::string, GemmFormat> out;
  visitWithOverrides(
      tree, gemm_formats, "gemm_formats", [](const ModuleNode&) {},
      [&](const ModuleNode& node) {
        const bool hasProduct = isLinearLike(node.type) && (node.ownParameters > 0 || !node.tiedTo.empty());
        if (!hasProduct) return;
        const GemmFormat* chosen = deepestOverride(node.path, gemm_formats);
        out[node.path] = chosen ? *chosen : gemm_format;
      });
  return out;
}

std::map<std::string, OptimizerMode> PrecisionPlan::resolveRecipes(const ModuleNode& tree,
                                                                   OptimizerMode runMode) const {
  if (!recipes.empty() && !modeIsLayerRecipe(runMode))
    throw ConfigError("precision plan: recipes give bf16 layers their own recipe, but mode " +
                      optimizerModeId(runMode) + (runMode == OptimizerMode::Fp32AdamW
                                                      ? " trains everything in fp32"
                                                      : " holds fp16 layers; use a bf16 mode"));
  std::map<std::string, OptimizerMode> out;
  visitWithOverrides(
      tree, recipes, "recipes",
      [](const ModuleNode& node) {
        if (!node.tiedTo.empty())
          throw ConfigError("precision plan: recipes '" + node.path + "' names the tied output head, which has no "
                            "weight of its own; set '" + node.tiedTo + "' instead");
      },
      [&](const ModuleNode& node) {
        if (node.ownParameters == 0) return;
        const OptimizerMode* chosen = deepestOverride(node.path, recipes);
        out[node.path] = chosen ? *chosen : runMode;
      });
  return out;
}

namespace {

// Whether a layer ends up with `store` as its moments (state_layout::moments'
// rule): "default" (the recipe's own) always; a bf16 layer when its recipe
// offers the choice; an fp32 layer takes a quantized store when the run's
// mode offers it (torchao quantizes fp32 weights' moments too) and keeps
// fp32 moments under any other.
bool storeApplies(MomentPrecision store, bool bf16, OptimizerMode recipe, OptimizerMode runMode) {
  if (store == MomentPrecision::ModeDefault) return true;
  if (bf16) return modeHasMomentChoice(recipe);
  if (momentsQuantized(store)) return modeHasMomentChoice(runMode);
  return store == MomentPrecision::Fp32;
}

}  // namespace

std::map<std::string, MomentPrecision> PrecisionPlan::resolveMoments(const ModuleNode& tree,
                                                                     OptimizerMode runMode) const {
  std::map<std::string, MomentPrecision> out;
  if (moments.empty()) return out;
  if (!modeIsLayerRecipe(runMode))
    throw ConfigError("precision plan: moments give layers their own moment store, but mode " +
                      optimizerModeId(runMode) +
                      (runMode == OptimizerMode::Fp32AdamW ? " trains everything in fp32 with fp32 moments"
                                                           : " holds fp16 layers; use a bf16 mode"));
  const std::map<std::string, LayerPrecision> precision = resolve(tree);
  const std::map<std::string, OptimizerMode> layerRecipes = resolveRecipes(tree, runMode);
  std::set<std::string> applied;  // entries that give at least one layer their store
  visitWithOverrides(
      tree, moments, "moments",
      [](const ModuleNode& node) {
        if (!node.tiedTo.empty())
          throw ConfigError("precision plan: moments '" + node.path + "' names the tied output head, which has no "
                            "weight of its own; set '" + node.tiedTo + "' instead");
      },
      [&](const ModuleNode& node) {
        if (node.ownParameters == 0) return;
        // The deepest entry reaching the node, and its path.
        const std::string* entry = nullptr;
        for (const auto& [path, store] : moments)
          if (inSubtree(node.path, path) && (!entry || path.size() >= entry->size())) entry = &path;
        if (!entry) return;
        const MomentPrecision store = moments.at(*entry);
        const auto p = precision.find(node.path);
        const bool bf16 = p != precision.end() && p->second == LayerPrecision::Bf16;
        const auto r = layerRecipes.find(node.path);
        const OptimizerMode recipe = r != layerRecipes.end() ? r->second : runMode;
        if (bf16 && !modeHasMomentChoice(recipe) && store != MomentPrecision::ModeDefault)
          throw ConfigError("precision plan: moments '" + *entry + "' puts \"" + momentPrecisionId(store) +
                            "\" on '" + node.path + "', a bf16 layer whose recipe " + optimizerModeId(recipe) +
                            " keeps its own moments (" + momentPrecisionId(momentPrecisionDefault(recipe)) +
                            "); stores go to bf16-nearest, bf16-kahan and bf16-sr layers (write \"default\" "
                            "for that subtree)");
        if (storeApplies(store, bf16, recipe, runMode)) applied.insert(*entry);
        out[node.path] = store;
      });
  for (const auto& [path, store] : moments)
    if (!applied.count(path))
      throw ConfigError("precision plan: moments '" + path + "' (\"" + momentPrecisionId(store) +
                        "\") changes no layer: fp32 layers keep fp32 moments except under a quantized store "
                        "(8bit, 4bit, fp8) in a run whose mode offers it (bf16-nearest, bf16-kahan, bf16-sr), "
                        "as with adamw.moments");
  return out;
}

bool PrecisionPlan::usesLowPrecisionGemms() const {
  if (gemm_format != GemmFormat::Bf16) return true;
  for (const auto& [path, f] : gemm_formats)
    if (f != GemmFormat::Bf16) return true;
  return false;
}

std::string planPresetId(PlanPreset p) {
  switch (p) {
    case PlanPreset::AllFp32: return "all-fp32";
    case PlanPreset::LinearBf16: return "linear-bf16";
    case PlanPreset::AllBf16: return "all-bf16";
  }
  return "unknown";
}

PlanPreset planPresetFromId(const std::string& id) {
  for (PlanPreset p : {PlanPreset::AllFp32, PlanPreset::LinearBf16, PlanPreset::AllBf16})
    if (planPresetId(p) == id) return p;
  throw ConfigError("unknown precision preset '" + id + "' (valid: all-fp32, linear-bf16, all-bf16)");
}

nlohmann::json toJson(const PrecisionPlan& p) {
  nlohmann::json overrides = nlohmann::json::object();
  for (const auto& [path, precision] : p.overrides) overrides[path] = precisionId(precision);
  nlohmann::json j = {{"preset", planPresetId(p.preset)},
                      {"norms_bf16", p.norms_bf16},
                      {"embeddings_bf16", p.embeddings_bf16},
                      {"overrides", overrides}};
  // Written only when set, so that plans without GEMM formats read as before.
  if (p.gemm_format != GemmFormat::Bf16) j["gemm_format"] = gemmFormatId(p.gemm_format);
  if (!p.gemm_formats.empty()) {
    nlohmann::json formats = nlohmann::json::object();
    for (const auto& [path, f] : p.gemm_formats) formats[path] = gemmFormatId(f);
    j["gemm_formats"] = formats;
  }
  if (!p.recipes.empty()) {
    nlohmann::json recipes = nlohmann::json::object();
    for (const auto& [path, m] : p.recipes) recipes[path] = optimizerModeId(m);
    j["recipes"] = recipes;
  }
  if (!p.moments.empty()) {
    nlohmann::json moments = nlohmann::json::object();
    for (const auto& [path, store] : p.moments) moments[path] = momentPrecisionId(store);
    j["moments"] = moments;
  }
  return j;
}

PrecisionPlan precisionPlanFromJson(const nlohmann::json& j) {
  using namespace json_strict;
  const std::string what = "plan";
  requireObject(j, what);
  rejectUnknownKeys(j, what, {"preset", "norms_bf16", "embeddings_bf16", "overrides", "gemm_format", "gemm_formats", "recipes",
                           "moments"});
  PrecisionPlan plan;
  std::string preset = planPresetId(plan.preset);
  readString(j, "preset", what, preset);
  plan.preset = planPresetFromId(preset);
  readBool(j, "norms_bf16", what, plan.norms_bf16);
  readBool(j, "embeddings_bf16", what, plan.embeddings_bf16);
  if (j.contains("overrides")) {
    const auto& o = j.at("overrides");
    requireObject(o, what + ".overrides");
    for (auto it = o.begin(); it != o.end(); ++it) {
      const std::string field = what + ".overrides['" + it.key() + "']";
      if (!it.value().is_string()) throw ConfigError(field + ": expected \"fp32\" or \"bf16\"");
      const std::string v = it.value().get<std::string>();
      if (v == "fp32") plan.overrides[it.key()] = LayerPrecision::Fp32;
      else if (v == "bf16") plan.overrides[it.key()] = LayerPrecision::Bf16;
      else throw ConfigError(field + ": '" + v + "' is not \"fp32\" or \"bf16\"");
    }
  }
  auto readFormat = [](const nlohmann::json& v, const std::string& field) {
    if (!v.is_string()) throw ConfigError(field + ": expected a GEMM format id string, got " + v.type_name());
    try {
      return gemmFormatFromId(v.get<std::string>());
    } catch (const ConfigError& e) {
      throw ConfigError(field + ": " + e.what());
    }
  };
  if (j.contains("gemm_format")) plan.gemm_format = readFormat(j.at("gemm_format"), what + ".gemm_format");
  if (j.contains("gemm_formats")) {
    const auto& o = j.at("gemm_formats");
    requireObject(o, what + ".gemm_formats");
    for (auto it = o.begin(); it != o.end(); ++it)
      plan.gemm_formats[it.key()] = readFormat(it.value(), what + ".gemm_formats['" + it.key() + "']");
  }
  if (j.contains("recipes")) {
    const auto& o = j.at("recipes");
    requireObject(o, what + ".recipes");
    for (auto it = o.begin(); it != o.end(); ++it) {
      const std::string field = what + ".recipes['" + it.key() + "']";
      if (!it.value().is_string()) throw ConfigError(field + ": expected a recipe id string");
      OptimizerMode m;
      try {
        m = optimizerModeFromId(it.value().get<std::string>());
      } catch (const ConfigError& e) {
        throw ConfigError(field + ": " + e.what());
      }
      if (!modeIsLayerRecipe(m))
        throw ConfigError(field + ": '" + optimizerModeId(m) +
                          "' is not a bf16 layer recipe (bf16, bf16-nearest, bf16-kahan, bf16-sr, mixed)");
      plan.recipes[it.key()] = m;
    }
  }
  if (j.contains("moments")) {
    const auto& o = j.at("moments");
    requireObject(o, what + ".moments");
    for (auto it = o.begin(); it != o.end(); ++it) {
      const std::string field = what + ".moments['" + it.key() + "']";
      if (!it.value().is_string()) throw ConfigError(field + ": expected a moment store id string");
      const std::string id = it.value().get<std::string>();
      std::string valid;
      bool known = false;
      for (MomentPrecision p : allMomentPrecisions()) {
        valid += (valid.empty() ? "" : ", ") + momentPrecisionId(p);
        if (momentPrecisionId(p) == id) {
          plan.moments[it.key()] = p;
          known = true;
        }
      }
      if (!known) throw ConfigError(field + ": unknown moment store '" + id + "' (valid: " + valid + ")");
    }
  }
  return plan;
}

int64_t bf16ParameterCount(const ModuleNode& tree, const std::map<std::string, LayerPrecision>& resolved) {
  int64_t count = 0;
  auto it = resolved.find(tree.path);
  if (it != resolved.end() && it->second == LayerPrecision::Bf16) count += tree.ownParameters;
  for (const ModuleNode& child : tree.children) count += bf16ParameterCount(child, resolved);
  return count;
}

}  // namespace plab
