#pragma once
// ZeRO-1's flat view: every parameter, in model order, laid end to end and
// cut into one contiguous range per rank. Shared by the sharded optimizer
// (which state each rank keeps) and the per-rank memory projection (what
// each rank would hold), so a projection cannot drift from the cut.
// Torch-free.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace plab {

// The elements [begin, begin + length) of parameter `param`, kept by rank `owner`.
struct ShardPiece {
  size_t param = 0;
  int64_t begin = 0;
  int64_t length = 0;
  int owner = 0;
};

// A cut inside a parameter falls on a multiple of this many elements (a
// whole chunk of the CPU kernel's Philox groups).
constexpr int64_t kShardAlignment = 64;

// Parameters of these sizes (model order) cut into `ranks` contiguous
// ranges of nearly equal length: the pieces in model order, each within one
// parameter. The same on every rank.
std::vector<ShardPiece> flatShards(const std::vector<int64_t>& sizes, int ranks);

}  // namespace plab
