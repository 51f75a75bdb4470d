#include "tokenizer/merge_boundaries.h"

#include "tokenizer/unicode_tables.h"

namespace plab {
namespace {

uint64_t pairKey(uint32_t a, uint32_t b) { return (static_cast<uint64_t>(a) << 32) | b; }

}  // namespace

MergeBoundaries::MergeBoundaries(const std::unordered_map<std::string, int64_t>& vocab,
                                 const std::vector<std::pair<std::string, std::string>>& merges)
    : asciiVocab_(128, false) {
  std::unordered_set<int64_t> ids;
  for (const auto& [spelling, id] : vocab) {
    if (!ids.insert(id).second) return;  // an id with two spellings: stay disabled
    std::size_t len = 0;
    if (spelling.empty()) continue;
    const uint32_t cp = unicode::decodeUtf8(spelling.data(), spelling.size(), 0, len);
    if (cp == unicode::kInvalidCodePoint || len != spelling.size()) continue;
    if (cp < 128)
      asciiVocab_[cp] = true;
    else
      vocabChars_.insert(cp);
  }
  // Every pair of adjacent characters in a merge's result (more than the
  // junction alone: cheap, and safe whatever the vocab holds).
  for (const auto& [left, right] : merges) {
    const std::string merged = left + right;
    uint32_t previous = unicode::kInvalidCodePoint;
    for (std::size_t pos = 0, len = 0; pos < merged.size(); pos += len) {
      const uint32_t cp = unicode::decodeUtf8(merged.data(), merged.size(), pos, len);
      if (previous != unicode::kInvalidCodePoint && cp != unicode::kInvalidCodePoint)
        joined_.insert(pairKey(previous, cp));
      previous = cp;
    }
  }
  enabled_ = true;
}

bool MergeBoundaries::isVocabChar(uint32_t cp) const {
  if (cp < 128) return asciiVocab_[cp];
  return cp != unicode::kInvalidCodePoint && vocabChars_.count(cp) != 0;
}

std::vector<std::string_view> MergeBoundaries::split(std::string_view piece) const {
  std::vector<std::string_view> words;
  if (!enabled_) {
    if (!piece.empty()) words.push_back(piece);
    return words;
  }
  std::size_t start = 0;
  uint32_t previous = unicode::kInvalidCodePoint;
  bool previousInVocab = false;
  for (std::size_t pos = 0, len = 0; pos < piece.size(); pos += len) {
    const uint32_t cp = unicode::decodeUtf8(piece.data(), piece.size(), pos, len);
    const bool inVocab = isVocabChar(cp);
    if (pos > 0 && previousInVocab && inVocab && joined_.count(pairKey(previous, cp)) == 0) {
      words.push_back(piece.substr(start, pos - start));
      start = pos;
    }
    previous = cp;
    previousInVocab = inVocab;
  }
  if (start < piece.size()) words.push_back(piece.substr(start));
  return words;
}

}  // namespace plab
