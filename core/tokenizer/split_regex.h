#pragma once
// A tokenizer.json Split regex, run by Oniguruma: the engine the Hugging Face
// tokenizers library runs it with, compiled the same way (Oniguruma's default
// syntax, UTF-8, no options), so Unicode classes, look-ahead, possessive
// quantifiers, `$` and the rest mean what they mean there. Matches are found
// as that library finds them (the onig crate's find_iter): leftmost match from
// the end of the previous one; an empty match at the very place the previous
// match ended is skipped by one character.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/split_pattern.h"

namespace plab {

class SplitRegex {
 public:
  // Longer patterns are refused (the longest published one, DeepSeek-LLM's,
  // is under 1 KB).
  static constexpr std::size_t kMaxPatternBytes = 64 * 1024;

  // Throws TokenizerError naming `source` and Oniguruma's message when the
  // pattern does not compile.
  SplitRegex(const std::string& pattern, const std::string& source);
  ~SplitRegex();
  SplitRegex(const SplitRegex&) = delete;
  SplitRegex& operator=(const SplitRegex&) = delete;

  // `text` cut into matches and the stretches between them, in order, as the
  // library's find_matches lists them (an empty text is one empty
  // non-match). Bytes that are not UTF-8 are matched as U+FFFD would be (a
  // symbol: neither letter, number nor space). Thread-safe. Throws
  // TokenizerError when one search backtracks more than Oniguruma's retry
  // limits allow (a pattern that takes exponential time on this text) or
  // needs a deeper backtracking stack than kMaxStackEntries.
  void findMatches(std::string_view text, std::vector<MatchSpan>& out) const;

  const std::string& pattern() const { return pattern_; }

 private:
  struct Compiled;
  std::string pattern_;
  std::string source_;
  std::unique_ptr<Compiled> compiled_;
};

}  // namespace plab
