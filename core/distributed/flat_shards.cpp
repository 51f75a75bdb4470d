#include "distributed/flat_shards.h"

#include <algorithm>

namespace plab {

std::vector<ShardPiece> flatShards(const std::vector<int64_t>& sizes, int ranks) {
  ranks = std::max(ranks, 1);
  std::vector<int64_t> start(sizes.size() + 1, 0);  // each parameter's first flat index
  for (size_t i = 0; i < sizes.size(); ++i) start[i + 1] = start[i] + sizes[i];
  const int64_t total = start.back();
  // Rank r's range is [cut[r], cut[r + 1]); an ideal cut moves to the nearest
  // aligned element of the parameter it falls in (or that parameter's end).
  std::vector<int64_t> cut(static_cast<size_t>(ranks) + 1, total);
  cut[0] = 0;
  for (int r = 1; r < ranks; ++r) {
    const int64_t ideal = total / ranks * r + total % ranks * r / ranks;  // total * r / ranks without overflow
    const size_t p = static_cast<size_t>(std::upper_bound(start.begin(), start.end(), ideal) - start.begin()) - 1;
    int64_t at = total;
    if (p < sizes.size()) {
      const int64_t local = (ideal - start[p] + kShardAlignment / 2) / kShardAlignment * kShardAlignment;
      at = start[p] + std::min(local, sizes[p]);
    }
    cut[static_cast<size_t>(r)] = std::max(at, cut[static_cast<size_t>(r) - 1]);
  }
  std::vector<ShardPiece> pieces;
  for (size_t i = 0; i < sizes.size(); ++i)
    for (int r = 0; r < ranks; ++r) {
      const int64_t lo = std::max(start[i], cut[static_cast<size_t>(r)]);
      const int64_t hi = std::min(start[i + 1], cut[static_cast<size_t>(r) + 1]);
      if (hi > lo) pieces.push_back({i, lo - start[i], hi - lo, r});
    }
  return pieces;
}

}  // namespace plab
