#pragma once
// What each rank of a data-parallel run holds, projected from the module tree
// alone (a 70 B model costs microseconds): the weights and gradients whole on
// every rank, and the optimizer state (moments, fp32 masters, Kahan buffers)
// of the rank's range of ZeRO-1's flat view when sharded, all of it when not.
// The cut is flatShards over the modules' parameters, so it can differ from
// the optimizer's cut (over single tensors) by less than kShardAlignment
// elements per rank boundary. Activations are not included. Torch-free.
#include <vector>

#include "precision/memory_estimate.h"

namespace plab {

std::vector<MemoryBreakdown> projectRankMemory(const std::vector<ParameterGroup>& groups, const AdamWOptions& options,
                                               int worldSize, bool sharded);

}  // namespace plab
