#include "precision/memory_estimate.h"

#include "precision/state_layout.h"

namespace plab {
namespace {

void collect(const ModuleNode& node, const std::map<std::string, LayerPrecision>& resolved, OptimizerMode mode,
             std::vector<ParameterGroup>& out) {
  // A module's own parameters come before its children's (named_parameters' order).
  if (node.ownParameters > 0) {
    const auto it = resolved.find(node.path);
    const bool bf16InPlan = it != resolved.end() && it->second == LayerPrecision::Bf16;
    out.push_back({node.path, node.ownParameters, bf16InPlan && mode != OptimizerMode::Fp32AdamW});
  }
  for (const ModuleNode& child : node.children) collect(child, resolved, mode, out);
}

}  // namespace

std::vector<ParameterGroup> parameterGroups(const ModuleNode& tree,
                                            const std::map<std::string, LayerPrecision>& resolved, OptimizerMode mode) {
  std::vector<ParameterGroup> out;
  collect(tree, resolved, mode, out);
  return out;
}

MemoryBreakdown elementBytes(int64_t n, bool bf16, OptimizerMode mode, const AdamWOptions& options) {
  MemoryBreakdown m;
  const int64_t paramBytes = bf16 ? 2 : 4;
  m.weights = paramBytes * n;
  m.gradients = (state_layout::fp32Gradients(mode, bf16) ? 4 : paramBytes) * n;
  m.moments = 2 * n * (state_layout::bf16Moments(mode, options, bf16) ? 2 : 4);
  if (state_layout::hasMaster(mode, bf16)) m.master = 4 * n;
  if (state_layout::hasKahan(mode, bf16)) m.kahan = 2 * n;
  return m;
}

MemoryBreakdown estimateMemory(const ModuleNode& tree, const std::map<std::string, LayerPrecision>& resolved,
                               OptimizerMode mode, const AdamWOptions& options) {
  MemoryBreakdown out;
  for (const ParameterGroup& g : parameterGroups(tree, resolved, mode)) {
    out += elementBytes(g.elements, g.bf16, mode, options);
  }
  return out;
}

}  // namespace plab
