#include "distributed/rank_memory_projection.h"

#include <algorithm>

#include "distributed/flat_shards.h"
#include "precision/state_layout.h"

namespace plab {

std::vector<MemoryBreakdown> projectRankMemory(const std::vector<ParameterGroup>& groups, const AdamWOptions& options,
                                               int worldSize, bool sharded) {
  worldSize = std::max(worldSize, 1);
  MemoryBreakdown replicated;  // weights and gradients: every rank holds them whole
  std::vector<int64_t> sizes;
  for (const ParameterGroup& g : groups) {
    const MemoryBreakdown m = elementBytes(g.elements, g.bf16, g.mode, state_layout::withStore(options, g.moments));
    replicated.weights += m.weights;
    replicated.gradients += m.gradients;
    sizes.push_back(g.elements);
  }
  std::vector<MemoryBreakdown> ranks(static_cast<size_t>(worldSize), replicated);
  const std::vector<ShardPiece> pieces = flatShards(sizes, sharded ? worldSize : 1);
  for (const ShardPiece& p : pieces) {
    const ParameterGroup& g = groups[p.param];
    const MemoryBreakdown m = elementBytes(p.length, g.bf16, g.mode, state_layout::withStore(options, g.moments));
    // Unsharded, every rank keeps all of it.
    for (int r = 0; r < worldSize; ++r) {
      if (sharded && r != p.owner) continue;
      MemoryBreakdown& into = ranks[static_cast<size_t>(r)];
      into.moments += m.moments;
      into.master += m.master;
      into.kahan += m.kahan;
      into.scales += m.scales;
    }
  }
  return ranks;
}

}  // namespace plab
