#pragma once
// Where a SentencePiece-style BPE may cut a long piece into words without
// changing its ids. Llama-2's tokenizer.json has no pre-tokenizer and
// Mistral's Metaspace does not split, so a whole document reaches the merge
// loop as one piece: O(n log n), but with a heap the size of the document
// (about 1 MB/s), and no piece is short enough for the cache.
//
// A cut between two adjacent characters a and b is safe when both are vocab
// entries of their own (neither byte fallback nor unknown) and no merge's
// result has a directly followed by b. Then no symbol can ever span the cut:
// a merged symbol's spelling is its characters' spellings in order, so one
// spanning the cut would spell "…ab…"; the pair across the cut is never in
// the merge table, and the merges on either side neither see nor change each
// other, so merging each word alone gives the same ids as merging the whole
// (the global order, lowest rank first, restricted to one word is that
// word's own order). With Llama-2 style vocabularies (no token has a "▁"
// after another character) every word boundary is such a cut.
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace plab {

class MergeBoundaries {
 public:
  MergeBoundaries() = default;
  // vocab: spelling -> id; merges: the pairs' spellings. Disabled (split
  // returns the piece whole) when two spellings share an id, as the
  // argument above needs each id to have one spelling.
  MergeBoundaries(const std::unordered_map<std::string, int64_t>& vocab,
                  const std::vector<std::pair<std::string, std::string>>& merges);

  // The words of `piece` (concatenated they give it back), cut at every safe
  // position.
  std::vector<std::string_view> split(std::string_view piece) const;

 private:
  bool isVocabChar(uint32_t cp) const;

  bool enabled_ = false;
  std::vector<bool> asciiVocab_;               // fast path for code points < 128
  std::unordered_set<uint32_t> vocabChars_;    // single-character vocab entries >= 128
  std::unordered_set<uint64_t> joined_;        // (a << 32 | b) adjacent in some merge result
};

}  // namespace plab
