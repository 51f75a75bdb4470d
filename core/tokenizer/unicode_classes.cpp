#include <algorithm>

#include "tokenizer/unicode_tables.h"

namespace plab::unicode {

namespace {
bool inRanges(const CodePointRange* ranges, std::size_t n, uint32_t cp) {
  const CodePointRange* end = ranges + n;
  // First range whose upper bound is >= cp.
  const CodePointRange* it =
      std::lower_bound(ranges, end, cp, [](const CodePointRange& r, uint32_t c) { return r.hi < c; });
  return it != end && it->lo <= cp;
}
}  // namespace

bool isLetter(uint32_t cp) {
  if (cp < 0x80) return (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z');
  return inRanges(kLetterRanges, kLetterRangesSize, cp);
}

bool isNumber(uint32_t cp) {
  if (cp < 0x80) return cp >= '0' && cp <= '9';
  return inRanges(kNumberRanges, kNumberRangesSize, cp);
}

bool isWhitespace(uint32_t cp) {
  // The Unicode White_Space property: a fixed, short list.
  if (cp >= 0x09 && cp <= 0x0D) return true;
  switch (cp) {
    case 0x20: case 0x85: case 0xA0: case 0x1680: case 0x2028: case 0x2029:
    case 0x202F: case 0x205F: case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

uint32_t decodeUtf8(const char* text, std::size_t size, std::size_t pos, std::size_t& len) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char b0 = byte(pos);
  len = 1;
  if (b0 < 0x80) return b0;
  std::size_t need;
  uint32_t cp;
  uint32_t minimum;
  if ((b0 & 0xE0) == 0xC0) { need = 1; cp = b0 & 0x1F; minimum = 0x80; }
  else if ((b0 & 0xF0) == 0xE0) { need = 2; cp = b0 & 0x0F; minimum = 0x800; }
  else if ((b0 & 0xF8) == 0xF0) { need = 3; cp = b0 & 0x07; minimum = 0x10000; }
  else return kInvalidCodePoint;
  if (pos + need >= size) return kInvalidCodePoint;  // truncated sequence
  for (std::size_t k = 1; k <= need; ++k) {
    const unsigned char b = byte(pos + k);
    if ((b & 0xC0) != 0x80) return kInvalidCodePoint;
    cp = (cp << 6) | (b & 0x3F);
  }
  // Overlong forms, surrogates and values past U+10FFFF are not valid UTF-8.
  if (cp < minimum || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return kInvalidCodePoint;
  len = need + 1;
  return cp;
}

}  // namespace plab::unicode
