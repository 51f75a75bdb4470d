#pragma once
// Unicode character classes needed by the byte-level BPE pre-tokenizers
// (the \p{L}, \p{N} and \s of the GPT-2 / Llama-3 / Qwen2 split regexes).
// std::regex knows no Unicode classes, so the scanners use these instead.
#include <cstddef>
#include <cstdint>

namespace plab::unicode {

struct CodePointRange {
  uint32_t lo;
  uint32_t hi;  // inclusive
};

// Generated tables (unicode_tables.cpp), sorted and disjoint.
extern const CodePointRange kLetterRanges[];
extern const std::size_t kLetterRangesSize;
extern const CodePointRange kNumberRanges[];
extern const std::size_t kNumberRangesSize;
extern const char* const kUnicodeVersion;

bool isLetter(uint32_t cp);      // general category L*
bool isNumber(uint32_t cp);      // general category N*
bool isWhitespace(uint32_t cp);  // White_Space property (regex \s)

// Marker for a byte that does not start a valid UTF-8 sequence: such bytes
// are classified as "other" (neither letter, number nor space).
constexpr uint32_t kInvalidCodePoint = 0xFFFFFFFFu;

// Decodes the code point starting at text[pos]; sets len to the bytes used
// (1 for an invalid byte, returning kInvalidCodePoint).
uint32_t decodeUtf8(const char* text, std::size_t size, std::size_t pos, std::size_t& len);

}  // namespace plab::unicode
