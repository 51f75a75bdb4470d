#include "tokenizer/metaspace.h"

namespace plab {

std::vector<std::string> Metaspace::apply(const std::string& text, bool atInputStart) const {
  std::string replaced;
  replaced.reserve(text.size() + replacement.size());
  for (char c : text) {
    if (c == ' ')
      replaced += replacement;
    else
      replaced += c;
  }
  const bool startsWithMarker = replaced.compare(0, replacement.size(), replacement) == 0;
  if (!startsWithMarker && (prepend == Prepend::Always || (prepend == Prepend::First && atInputStart)))
    replaced = replacement + replaced;
  if (!split) return {replaced};
  // Every marker starts a new piece (Hugging Face's MergedWithNext).
  std::vector<std::string> pieces;
  std::size_t start = 0;
  for (std::size_t hit = replaced.find(replacement, 1); hit != std::string::npos;
       hit = replaced.find(replacement, hit + replacement.size())) {
    pieces.push_back(replaced.substr(start, hit - start));
    start = hit;
  }
  if (start < replaced.size()) pieces.push_back(replaced.substr(start));
  return pieces;
}

}  // namespace plab
