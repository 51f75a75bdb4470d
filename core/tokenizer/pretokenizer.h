#pragma once
// Hand-written scanners equivalent to three split regexes of byte-level BPE
// tokenizers, faster than running them through the regex engine
// (split_regex.h; bench_tokenizer measures both). Each scanner walks the text
// code point by code point and, at every position, takes the first regex
// alternative that matches, exactly as the regex engine would, including the
// one-character backtrack of `\s+(?!\S)`.
//
// Gpt2:   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// Llama3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//         ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
// Qwen2:  as Llama3 with \p{N} (one digit) instead of \p{N}{1,3}.
// Bytes that are not valid UTF-8 count as "other" characters (neither
// letter, number nor space). (?i) folds ASCII letters only.
#include <optional>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/split_pattern.h"

namespace plab {

enum class SplitRule { Gpt2, Llama3, Qwen2 };

extern const char* const kGpt2SplitRegex;
extern const char* const kLlama3SplitRegex;
extern const char* const kQwen2SplitRegex;

// The rule whose regex is exactly `pattern`, if it is one we implement.
std::optional<SplitRule> splitRuleForRegex(const std::string& pattern);

// The pieces of `text` (concatenated they give `text` back), as byte spans.
void preTokenizeSpans(std::string_view text, SplitRule rule, std::vector<TextSpan>& pieces);
std::vector<std::string> preTokenize(const std::string& text, SplitRule rule);

// The last position p, 1 <= p <= text.size() - lookahead, where text[p] is a
// U+0020 space right after a valid UTF-8 code point that is not whitespace;
// 0 if there is none. Every split rule above (and Metaspace with split) ends
// a piece there and never looks back across it, so the pieces of text[0, p)
// and of the rest are the pieces of the whole.
std::size_t lastSpaceAfterNonSpace(std::string_view text, std::size_t lookahead = 1);

}  // namespace plab
