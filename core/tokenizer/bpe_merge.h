#pragma once
// The BPE merge loop of the Hugging Face tokenizers library: repeatedly merge
// the adjacent pair with the lowest rank (ties: leftmost first), using a
// priority queue over a linked list of symbols so that a word of n symbols
// costs O(n log n) instead of O(n^2) (a 50 KB word without spaces is fine).
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace plab {

struct BpeMerge {
  int rank;
  int64_t merged;  // id of the merged token
};

// (left id << 32 | right id) -> rank and result.
using BpeMergeTable = std::unordered_map<uint64_t, BpeMerge>;

inline uint64_t bpePairKey(int64_t left, int64_t right) {
  return (static_cast<uint64_t>(left) << 32) | static_cast<uint64_t>(right);
}

// Merges `symbols` (token ids) in place.
void applyBpeMerges(std::vector<int64_t>& symbols, const BpeMergeTable& merges);

}  // namespace plab
