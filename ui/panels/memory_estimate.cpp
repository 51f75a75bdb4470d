#include "panels/memory_estimate.h"

#include "precision/state_layout.h"

namespace plab::ui {
namespace {

void addElements(plab::MemoryBreakdown& m, int64_t n, bool bf16InPlan, plab::OptimizerMode mode,
                 const plab::AdamWOptions& options) {
  // fp32 AdamW keeps every parameter in fp32 whatever the plan says.
  const bool bf16 = bf16InPlan && mode != plab::OptimizerMode::Fp32AdamW;
  const int64_t paramBytes = bf16 ? 2 : 4;
  m.weights += paramBytes * n;
  m.gradients += paramBytes * n;
  m.moments += 2 * n * (plab::state_layout::bf16Moments(mode, options, bf16) ? 2 : 4);
  if (plab::state_layout::hasMaster(mode, bf16)) m.master += 4 * n;
  if (plab::state_layout::hasKahan(mode, bf16)) m.kahan += 2 * n;
}

void walk(const plab::ModuleNode& node, const std::map<std::string, plab::LayerPrecision>& resolved,
          plab::OptimizerMode mode, const plab::AdamWOptions& options, plab::MemoryBreakdown& out) {
  if (node.ownParameters > 0) {
    const auto it = resolved.find(node.path);
    const bool bf16 = it != resolved.end() && it->second == plab::LayerPrecision::Bf16;
    addElements(out, node.ownParameters, bf16, mode, options);
  }
  for (const auto& child : node.children) walk(child, resolved, mode, options, out);
}

}  // namespace

plab::MemoryBreakdown estimateMemory(const plab::ModuleNode& tree,
                                     const std::map<std::string, plab::LayerPrecision>& resolved,
                                     plab::OptimizerMode mode, const plab::AdamWOptions& options) {
  plab::MemoryBreakdown out;
  walk(tree, resolved, mode, options, out);
  return out;
}

}  // namespace plab::ui
