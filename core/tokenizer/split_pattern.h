#pragma once
// What a tokenizer.json Split pre-tokenizer does with the matches of its
// pattern, as the Hugging Face tokenizers library does it
// (NormalizedString::split): the text is cut into matches and the stretches
// between them; `invert` swaps which are which; the behavior decides what
// becomes a piece; empty pieces are dropped.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plab {

// tokenizer.json spells them "Removed", "Isolated", "MergedWithPrevious",
// "MergedWithNext", "Contiguous".
enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };
std::optional<SplitBehavior> splitBehaviorFromName(const std::string& name);

struct TextSpan {
  std::size_t begin = 0, end = 0;  // byte offsets, [begin, end)
};

// A match of the pattern (isMatch) or the text between two matches. The
// spans of a text follow each other and cover it.
struct MatchSpan {
  std::size_t begin = 0, end = 0;
  bool isMatch = false;
};

// The non-empty pieces that `behavior` keeps from `spans` (inverted first
// when `invert`): Isolated keeps every span; Removed drops the matches;
// MergedWithPrevious joins a match to the span before it, MergedWithNext to
// the span after it; Contiguous joins runs of matches and runs of
// non-matches.
void piecesFromMatches(const std::vector<MatchSpan>& spans, SplitBehavior behavior, bool invert,
                       std::vector<TextSpan>& pieces);

// The spans of a literal (non-regex) pattern: its non-overlapping
// occurrences, left to right. `literal` must not be empty.
void findLiteralMatches(std::string_view text, std::string_view literal, std::vector<MatchSpan>& out);

}  // namespace plab
