#include "tokenizer/bpe_merge.h"

#include <queue>

namespace plab {
namespace {

struct Symbol {
  int64_t id;
  int64_t prev;  // index of the previous live symbol, -1 at the start
  int64_t next;  // index of the next live symbol, size at the end
  bool alive;
};

struct Candidate {
  int rank;
  int64_t pos;  // index of the left symbol
  int64_t merged;
  // std::priority_queue pops the largest: invert so the lowest rank, then the
  // leftmost position, comes first.
  bool operator<(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
};

}  // namespace

void applyBpeMerges(std::vector<int64_t>& ids, const BpeMergeTable& merges) {
  const auto n = static_cast<int64_t>(ids.size());
  if (n < 2) return;
  std::vector<Symbol> symbols(ids.size());
  std::priority_queue<Candidate> queue;
  auto consider = [&](int64_t pos) {
    const int64_t next = symbols[pos].next;
    if (next >= n) return;
    auto it = merges.find(bpePairKey(symbols[pos].id, symbols[next].id));
    if (it != merges.end()) queue.push({it->second.rank, pos, it->second.merged});
  };
  for (int64_t i = 0; i < n; ++i) symbols[i] = {ids[i], i - 1, i + 1, true};
  for (int64_t i = 0; i + 1 < n; ++i) consider(i);

  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.pos];
    if (!left.alive || left.next >= n) continue;
    // The entry is stale when either side has changed since it was queued.
    auto it = merges.find(bpePairKey(left.id, symbols[left.next].id));
    if (it == merges.end() || it->second.rank != top.rank || it->second.merged != top.merged) continue;
    Symbol& right = symbols[left.next];
    right.alive = false;
    left.id = top.merged;
    left.next = right.next;
    if (right.next < n) symbols[right.next].prev = top.pos;
    if (left.prev >= 0) consider(left.prev);
    consider(top.pos);
  }
  ids.clear();
  for (int64_t i = 0; i < n; i = symbols[i].next) ids.push_back(symbols[i].id);
}

}  // namespace plab
