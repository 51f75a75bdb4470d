#include "advisor/candidate_plans.h"

#include <algorithm>
#include <cmath>

#include "precision/memory_estimate.h"

namespace plab {

bool layerAtRisk(double lost, double se, double threshold) {
  // An unknown standard error (too few elements) decides nothing by itself.
  const double margin = std::isfinite(se) ? 2 * se : 0.0;
  return std::isfinite(lost) && lost > threshold && lost > margin;
}

namespace {

void collectOwnParameters(const ModuleNode& n, std::map<std::string, int64_t>& out) {
  if (n.ownParameters > 0) out[n.path] = n.ownParameters;
  for (const ModuleNode& c : n.children) collectOwnParameters(c, out);
}

// The shadow's figure (and its standard error) for a bf16 write rule.
std::pair<double, double> shadowLost(const LayerShadowFigures& l, OptimizerMode mode) {
  if (mode == OptimizerMode::Bf16StochasticRounding) return {l.lostStochastic, l.lostStochasticSe};
  if (mode == OptimizerMode::Bf16Kahan) return {l.lostKahan, l.lostKahanSe};
  return {l.lostNearest, l.lostNearestSe};
}

OptimizerMode recipeOf(const std::string& layer, OptimizerMode mode, const std::map<std::string, OptimizerMode>& recipes) {
  const auto it = recipes.find(layer);
  return it == recipes.end() ? mode : it->second;
}

bool listContains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

bool compensated(OptimizerMode m) {
  return m == OptimizerMode::Bf16StochasticRounding || m == OptimizerMode::Bf16Kahan;
}

}  // namespace

std::vector<std::string> layersAtRisk(const std::vector<LayerShadowFigures>& layers, OptimizerMode mode,
                                      double threshold) {
  std::vector<std::string> out;
  for (const LayerShadowFigures& l : layers) {
    const auto [lost, se] = shadowLost(l, mode);
    if (layerAtRisk(lost, se, threshold)) out.push_back(l.layer);
  }
  return out;
}

std::optional<double> predictedUpdateLost(const ModuleNode& tree, const std::vector<LayerShadowFigures>& layers,
                                          OptimizerMode mode, const std::vector<std::string>& fp32Layers,
                                          const std::map<std::string, OptimizerMode>& layerRecipes) {
  std::map<std::string, int64_t> sizes;
  collectOwnParameters(tree, sizes);
  double weighted = 0, total = 0;
  for (const LayerShadowFigures& l : layers) {
    const auto it = sizes.find(l.layer);
    const double n = it == sizes.end() ? double(l.elements) : double(it->second);
    total += n;
    const double lost = shadowLost(l, recipeOf(l.layer, mode, layerRecipes)).first;
    if (!listContains(fp32Layers, l.layer) && std::isfinite(lost)) weighted += n * lost;
  }
  if (!(total > 0)) return std::nullopt;
  return weighted / total;
}

int64_t fp32StateBytes(const ModuleNode& tree, const AdamWOptions& options) {
  PrecisionPlan all;
  all.preset = PlanPreset::AllFp32;
  return estimateMemory(tree, all.resolve(tree), OptimizerMode::Fp32AdamW, options).total();
}

std::vector<AdvisorCandidate> buildCandidates(const RunConfig& base, const ModuleNode& tree,
                                              const std::vector<LayerShadowFigures>& layers, double threshold) {
  const int64_t fp32Bytes = fp32StateBytes(tree, base.adamw);
  std::map<std::string, int64_t> sizes;
  collectOwnParameters(tree, sizes);
  std::vector<AdvisorCandidate> out;
  auto add = [&](OptimizerMode mode, const std::vector<std::string>& fp32Layers,
                 const std::map<std::string, OptimizerMode>& recipes, const std::string& name,
                 const std::string& description) {
    for (const AdvisorCandidate& seen : out)
      if (seen.config.mode == mode && seen.fp32Layers == fp32Layers && seen.layerRecipes == recipes) return;
    AdvisorCandidate c;
    c.name = name;
    c.description = description;
    c.config = base;
    c.config.mode = mode;
    // Every layer bf16 but the named ones; the base's GEMM formats stay.
    c.config.plan.preset = PlanPreset::AllBf16;
    c.config.plan.overrides.clear();
    c.config.plan.recipes = recipes;
    c.config.plan.moments.clear();  // the moment stage puts stores on the chosen plan (moment_stores.h)
    for (const std::string& layer : fp32Layers) c.config.plan.setSubtree(layer, LayerPrecision::Fp32);
    c.config.shadow_recipes = false;
    c.config.shadow_gemm_formats.clear();
    c.config.output_dir.clear();
    c.fp32Layers = fp32Layers;
    c.layerRecipes = recipes;
    c.stateBytes = estimateMemory(tree, c.config.plan, mode, base.adamw).total();
    c.memorySaved = fp32Bytes > 0 ? 1.0 - double(c.stateBytes) / double(fp32Bytes) : 0.0;
    c.predictedUpdateLost = predictedUpdateLost(tree, layers, mode, fp32Layers, recipes);
    for (const LayerShadowFigures& l : layers) {
      if (listContains(fp32Layers, l.layer)) continue;
      const OptimizerMode r = recipeOf(l.layer, mode, recipes);
      const auto [lost, se] = shadowLost(l, r);
      if (layerAtRisk(lost, se, threshold)) ++c.layersAtRisk;
      const auto size = sizes.find(l.layer);
      if (compensated(r)) c.compensatedElements += size == sizes.end() ? l.elements : size->second;
    }
    out.push_back(std::move(c));
  };
  // The layers a write loses more than a share of, at a few shares (the
  // given threshold and stricter ones), so that the frontier has points
  // between all-bf16 and fp32.
  std::vector<std::pair<std::string, std::vector<std::string>>> riskySets;  // (percent, layers)
  auto sharesOf = [&](OptimizerMode mode) {
    riskySets.clear();
    for (double share : {threshold, 0.5, 0.9}) {
      if (share < threshold) continue;
      std::vector<std::string> risky = layersAtRisk(layers, mode, share);
      if (risky.empty() || risky.size() == layers.size()) continue;
      riskySets.emplace_back(std::to_string(int(std::lround(share * 100))), std::move(risky));
    }
  };
  const std::pair<OptimizerMode, const char*> writes[] = {{OptimizerMode::Bf16Nearest, "nearest"},
                                                          {OptimizerMode::Bf16StochasticRounding, "stochastic"},
                                                          {OptimizerMode::Bf16Kahan, "Kahan"}};
  for (const auto& [mode, write] : writes) {
    const std::string id = optimizerModeId(mode);
    add(mode, {}, {}, id, std::string("every layer bf16, ") + write + " writes");
    sharesOf(mode);
    for (const auto& [percent, risky] : riskySets)
      add(mode, risky, {}, id + " + fp32 where it loses > " + percent + " %",
          std::string("bf16 with ") + write + " writes; fp32 for the " + std::to_string(risky.size()) +
              " layer(s) whose shadow " + write + " write loses > " + percent + " % of the update");
  }
  // Compensation only where it is needed: nearest writes, and a compensated
  // recipe for the layers nearest writes lose too much of.
  sharesOf(OptimizerMode::Bf16Nearest);
  for (const auto& [fix, write] : {writes[1], writes[2]}) {
    for (const auto& [percent, risky] : riskySets) {
      std::map<std::string, OptimizerMode> recipes;
      for (const std::string& layer : risky) recipes[layer] = fix;
      add(OptimizerMode::Bf16Nearest, {}, recipes,
          "bf16-nearest + " + optimizerModeId(fix) + " where nearest loses > " + percent + " %",
          std::string("bf16 with nearest writes; ") + write + " writes for the " + std::to_string(risky.size()) +
              " layer(s) whose shadow nearest write loses > " + percent + " % of the update");
    }
  }
  // Least memory first; ties keep the order above (plain writes before the fixes).
  std::stable_sort(out.begin(), out.end(),
                   [](const AdvisorCandidate& a, const AdvisorCandidate& b) { return a.stateBytes < b.stateBytes; });
  return out;
}

}  // namespace plab
