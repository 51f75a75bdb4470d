#include "advisor/candidate_plans.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "precision/memory_estimate.h"

namespace plab {

bool layerAtRisk(double lost, double se, double threshold) {
  // An unknown standard error (too few elements) decides nothing by itself.
  const double margin = std::isfinite(se) ? 2 * se : 0.0;
  return std::isfinite(lost) && lost > threshold && lost > margin;
}

std::vector<std::string> layersAtRisk(const std::vector<LayerShadowFigures>& layers, OptimizerMode mode,
                                      double threshold) {
  std::vector<std::string> out;
  for (const LayerShadowFigures& l : layers) {
    const bool risk = mode == OptimizerMode::Bf16StochasticRounding ? layerAtRisk(l.lostStochastic, l.lostStochasticSe, threshold)
                      : mode == OptimizerMode::Bf16Kahan           ? layerAtRisk(l.lostKahan, l.lostKahanSe, threshold)
                                                                   : layerAtRisk(l.lostNearest, l.lostNearestSe, threshold);
    if (risk) out.push_back(l.layer);
  }
  return out;
}

namespace {

void collectOwnParameters(const ModuleNode& n, std::map<std::string, int64_t>& out) {
  if (n.ownParameters > 0) out[n.path] = n.ownParameters;
  for (const ModuleNode& c : n.children) collectOwnParameters(c, out);
}

double shadowLost(const LayerShadowFigures& l, OptimizerMode mode) {
  if (mode == OptimizerMode::Bf16StochasticRounding) return l.lostStochastic;
  if (mode == OptimizerMode::Bf16Kahan) return l.lostKahan;
  return l.lostNearest;
}

}  // namespace

std::optional<double> predictedUpdateLost(const ModuleNode& tree, const std::vector<LayerShadowFigures>& layers,
                                          OptimizerMode mode, const std::vector<std::string>& fp32Layers) {
  std::map<std::string, int64_t> sizes;
  collectOwnParameters(tree, sizes);
  double weighted = 0, total = 0;
  for (const LayerShadowFigures& l : layers) {
    const auto it = sizes.find(l.layer);
    const double n = it == sizes.end() ? double(l.elements) : double(it->second);
    const bool fp32 = std::find(fp32Layers.begin(), fp32Layers.end(), l.layer) != fp32Layers.end();
    total += n;
    if (!fp32 && std::isfinite(shadowLost(l, mode))) weighted += n * shadowLost(l, mode);
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
  std::vector<AdvisorCandidate> out;
  auto add = [&](OptimizerMode mode, const std::vector<std::string>& fp32Layers, const std::string& name,
                 const std::string& description) {
    AdvisorCandidate c;
    c.name = name;
    c.description = description;
    c.config = base;
    c.config.mode = mode;
    // Every layer bf16 but the named ones; the base's GEMM formats stay.
    c.config.plan.preset = PlanPreset::AllBf16;
    c.config.plan.overrides.clear();
    for (const std::string& layer : fp32Layers) c.config.plan.setSubtree(layer, LayerPrecision::Fp32);
    c.config.shadow_recipes = false;
    c.config.output_dir.clear();
    c.fp32Layers = fp32Layers;
    for (const AdvisorCandidate& seen : out)
      if (seen.config.mode == mode && seen.fp32Layers == fp32Layers) return;
    c.stateBytes = estimateMemory(tree, c.config.plan.resolve(tree), mode, base.adamw).total();
    c.memorySaved = fp32Bytes > 0 ? 1.0 - double(c.stateBytes) / double(fp32Bytes) : 0.0;
    c.predictedUpdateLost = predictedUpdateLost(tree, layers, mode, fp32Layers);
    out.push_back(std::move(c));
  };
  const std::pair<OptimizerMode, const char*> writes[] = {{OptimizerMode::Bf16Nearest, "nearest"},
                                                          {OptimizerMode::Bf16StochasticRounding, "stochastic"},
                                                          {OptimizerMode::Bf16Kahan, "Kahan"}};
  for (const auto& [mode, write] : writes) {
    const std::string id = optimizerModeId(mode);
    add(mode, {}, id, std::string("every layer bf16, ") + write + " writes");
    // fp32 for the layers this write loses more than a share of, at a few
    // shares (the given threshold and stricter ones), so that the frontier
    // has points between all-bf16 and fp32.
    for (double share : {threshold, 0.5, 0.9}) {
      if (share < threshold) continue;
      const std::vector<std::string> risky = layersAtRisk(layers, mode, share);
      if (risky.empty() || risky.size() == layers.size()) continue;
      const std::string percent = std::to_string(int(std::lround(share * 100)));
      add(mode, risky, id + " + fp32 where it loses > " + percent + " %",
          std::string("bf16 with ") + write + " writes; fp32 for the " + std::to_string(risky.size()) +
              " layer(s) whose shadow " + write + " write loses > " + percent + " % of the update");
    }
  }
  // Least memory first; ties keep the order above (plain writes before the fixes).
  std::stable_sort(out.begin(), out.end(),
                   [](const AdvisorCandidate& a, const AdvisorCandidate& b) { return a.stateBytes < b.stateBytes; });
  return out;
}

}  // namespace plab
