#pragma once
// A byte-level tokenizer.json's pre-tokenizer as a list of steps, applied in
// order, each to every piece the steps before it left (as the tokenizers
// library's Sequence does): a Split by a regex (a hand-written scanner for
// the GPT-2 / Llama-3 / Qwen2 regexes, Oniguruma for any other), by a literal
// string, Digits, and ByteLevel's own parts (its prefix space, its GPT-2
// split). The byte -> character mapping of ByteLevel is not a step: it
// happens when a piece is merged, and nothing may split after it.
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/pretokenizer.h"
#include "tokenizer/split_pattern.h"
#include "tokenizer/split_regex.h"

namespace plab {

struct PreTokenizerStep {
  enum class Kind { Scanner, Regex, Literal, PrefixSpace };
  Kind kind = Kind::Scanner;
  SplitRule rule = SplitRule::Gpt2;          // Scanner
  std::shared_ptr<const SplitRegex> regex;   // Regex
  std::string literal;                       // Literal (not empty)
  SplitBehavior behavior = SplitBehavior::Isolated;  // Regex, Literal
  bool invert = false;                               // Regex, Literal

  // A Split with this regex, behavior and invert: a scanner when the regex
  // is one of the three it implements and the pieces are exactly its
  // matches (the behavior keeps each match apart), else Oniguruma.
  static PreTokenizerStep split(const std::string& regex, SplitBehavior behavior, bool invert,
                                const std::string& source);
  static PreTokenizerStep scanner(SplitRule rule);
  static PreTokenizerStep literalSplit(const std::string& literal, SplitBehavior behavior, bool invert);
  static PreTokenizerStep prefixSpace();
};

// Calls emit(piece) for each non-empty piece the steps cut `text` into, in
// order (no step: the text itself).
template <typename Emit>
void preTokenizeSteps(std::string_view text, const std::vector<PreTokenizerStep>& steps, Emit&& emit);

// True when the steps are scanners (and prefix spaces): then a piece always
// ends before a U+0020 space that follows a non-space
// (lastSpaceAfterNonSpace), which safe cuts for long documents rely on.
// Regex steps promise nothing.
bool cutsBeforeSpaces(const std::vector<PreTokenizerStep>& steps);

namespace detail {
void stepSpans(std::string_view text, const PreTokenizerStep& step, std::vector<TextSpan>& pieces);

template <typename Emit>
void applyFrom(std::string_view text, const std::vector<PreTokenizerStep>& steps, std::size_t index, Emit& emit) {
  if (text.empty()) return;
  if (index == steps.size()) {
    emit(text);
    return;
  }
  const PreTokenizerStep& step = steps[index];
  if (step.kind == PreTokenizerStep::Kind::PrefixSpace) {
    if (text.front() == ' ') {
      applyFrom(text, steps, index + 1, emit);
    } else {
      const std::string prefixed = " " + std::string(text);
      applyFrom(prefixed, steps, index + 1, emit);
    }
    return;
  }
  std::vector<TextSpan> pieces;
  stepSpans(text, step, pieces);
  for (const TextSpan& p : pieces) applyFrom(text.substr(p.begin, p.end - p.begin), steps, index + 1, emit);
}
}  // namespace detail

template <typename Emit>
void preTokenizeSteps(std::string_view text, const std::vector<PreTokenizerStep>& steps, Emit&& emit) {
  detail::applyFrom(text, steps, 0, emit);
}

}  // namespace plab
