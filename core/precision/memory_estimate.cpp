#include "precision/memory_estimate.h"

#include "precision/state_layout.h"

namespace plab {
namespace {

void collect(const ModuleNode& node, const std::map<std::string, LayerPrecision>& resolved, OptimizerMode mode,
             const std::map<std::string, OptimizerMode>& recipes, const std::map<std::string, MomentPrecision>& moments,
             std::vector<ParameterGroup>& out) {
  // A module's own parameters come before its children's (named_parameters' order).
  if (node.ownParameters > 0) {
    const auto it = resolved.find(node.path);
    const bool bf16 = it != resolved.end() && it->second == LayerPrecision::Bf16 && mode != OptimizerMode::Fp32AdamW;
    const auto recipe = recipes.find(node.path);
    ParameterGroup g{node.path, node.ownParameters, bf16, bf16 && recipe != recipes.end() ? recipe->second : mode};
    const auto store = moments.find(node.path);
    if (store != moments.end() && mode != OptimizerMode::Fp32AdamW) g.moments = store->second;
    out.push_back(std::move(g));
  }
  for (const ModuleNode& child : node.children) collect(child, resolved, mode, recipes, moments, out);
}

}  // namespace

std::vector<ParameterGroup> parameterGroups(const ModuleNode& tree,
                                            const std::map<std::string, LayerPrecision>& resolved, OptimizerMode mode,
                                            const std::map<std::string, OptimizerMode>& recipes,
                                            const std::map<std::string, MomentPrecision>& moments) {
  std::vector<ParameterGroup> out;
  collect(tree, resolved, mode, recipes, moments, out);
  return out;
}

MemoryBreakdown elementBytes(int64_t n, bool bf16, OptimizerMode mode, const AdamWOptions& options) {
  MemoryBreakdown m;
  const int64_t paramBytes = bf16 ? 2 : 4;
  m.weights = paramBytes * n;
  m.gradients = (state_layout::fp32Gradients(mode, bf16) ? 4 : paramBytes) * n;
  m.moments = state_layout::momentBytes(n, mode, options, bf16);
  m.scales = state_layout::scaleBytes(n, mode, options, bf16);
  if (state_layout::hasMaster(mode, bf16)) m.master = 4 * n;
  if (state_layout::hasKahan(mode, bf16)) m.kahan = 2 * n;
  return m;
}

MemoryBreakdown estimateMemory(const ModuleNode& tree, const std::map<std::string, LayerPrecision>& resolved,
                               OptimizerMode mode, const AdamWOptions& options,
                               const std::map<std::string, OptimizerMode>& recipes,
                               const std::map<std::string, MomentPrecision>& moments) {
  MemoryBreakdown out;
  for (const ParameterGroup& g : parameterGroups(tree, resolved, mode, recipes, moments))
    out += elementBytes(g.elements, g.bf16, g.mode, state_layout::withStore(options, g.moments));
  return out;
}

MemoryBreakdown estimateMemory(const ModuleNode& tree, const PrecisionPlan& plan, OptimizerMode mode,
                               const AdamWOptions& options) {
  const bool recipes = mode != OptimizerMode::Fp32AdamW && !plan.recipes.empty();
  const bool moments = mode != OptimizerMode::Fp32AdamW && !plan.moments.empty();
  return estimateMemory(tree, plan.resolve(tree), mode, options,
                        recipes ? plan.resolveRecipes(tree, mode) : std::map<std::string, OptimizerMode>{},
                        moments ? plan.resolveMoments(tree, mode) : std::map<std::string, MomentPrecision>{});
}

}  // namespace plab
