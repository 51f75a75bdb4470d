#include "tokenizer/split_pattern.h"

namespace plab {

std::optional<SplitBehavior> splitBehaviorFromName(const std::string& name) {
  if (name == "Removed") return SplitBehavior::Removed;
  if (name == "Isolated") return SplitBehavior::Isolated;
  if (name == "MergedWithPrevious") return SplitBehavior::MergedWithPrevious;
  if (name == "MergedWithNext") return SplitBehavior::MergedWithNext;
  if (name == "Contiguous") return SplitBehavior::Contiguous;
  return std::nullopt;
}

void piecesFromMatches(const std::vector<MatchSpan>& spans, SplitBehavior behavior, bool invert,
                       std::vector<TextSpan>& pieces) {
  pieces.clear();
  // Each span becomes a candidate piece; the folds below follow the
  // library's, including how they treat empty matches.
  struct Candidate {
    TextSpan span;
    bool removed;
  };
  std::vector<Candidate> kept;
  kept.reserve(spans.size());
  bool previousMatch = false;
  switch (behavior) {
    case SplitBehavior::Isolated:
    case SplitBehavior::Removed:
      for (const MatchSpan& s : spans) {
        const bool match = s.isMatch != invert;
        kept.push_back({{s.begin, s.end}, behavior == SplitBehavior::Removed && match});
      }
      break;
    case SplitBehavior::Contiguous:
      for (const MatchSpan& s : spans) {
        const bool match = s.isMatch != invert;
        if (match == previousMatch && !kept.empty())
          kept.back().span.end = s.end;
        else
          kept.push_back({{s.begin, s.end}, false});
        previousMatch = match;
      }
      break;
    case SplitBehavior::MergedWithPrevious:
      for (const MatchSpan& s : spans) {
        const bool match = s.isMatch != invert;
        if (match && !previousMatch && !kept.empty())
          kept.back().span.end = s.end;
        else
          kept.push_back({{s.begin, s.end}, false});
        previousMatch = match;
      }
      break;
    case SplitBehavior::MergedWithNext:
      // Folded from the end: a match takes the span after it.
      for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
        const bool match = it->isMatch != invert;
        if (match && !previousMatch && !kept.empty())
          kept.back().span.begin = it->begin;
        else
          kept.push_back({{it->begin, it->end}, false});
        previousMatch = match;
      }
      std::vector<Candidate>(kept.rbegin(), kept.rend()).swap(kept);
      break;
  }
  for (const Candidate& c : kept)
    if (!c.removed && c.span.end > c.span.begin) pieces.push_back(c.span);
}

void findLiteralMatches(std::string_view text, std::string_view literal, std::vector<MatchSpan>& out) {
  out.clear();
  std::size_t prev = 0;
  for (std::size_t at = text.find(literal); at != std::string_view::npos; at = text.find(literal, at + literal.size())) {
    if (at != prev) out.push_back({prev, at, false});
    out.push_back({at, at + literal.size(), true});
    prev = at + literal.size();
  }
  if (prev != text.size() || text.empty()) out.push_back({prev, text.size(), false});
}

}  // namespace plab
