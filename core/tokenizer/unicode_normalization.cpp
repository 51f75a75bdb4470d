#include "tokenizer/unicode_normalization.h"

#include <cstdlib>

#include <utf8proc.h>

#include "tokenizer/unicode_tables.h"

namespace plab::unicode {
namespace {

utf8proc_option_t optionsFor(NormalForm form) {
  const int stable = UTF8PROC_STABLE;
  switch (form) {
    case NormalForm::NFC: return static_cast<utf8proc_option_t>(stable | UTF8PROC_COMPOSE);
    case NormalForm::NFD: return static_cast<utf8proc_option_t>(stable | UTF8PROC_DECOMPOSE);
    case NormalForm::NFKC: return static_cast<utf8proc_option_t>(stable | UTF8PROC_COMPOSE | UTF8PROC_COMPAT);
    case NormalForm::NFKD: return static_cast<utf8proc_option_t>(stable | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT);
  }
  return UTF8PROC_STABLE;
}

void appendNormalized(const std::string& text, std::size_t begin, std::size_t end, utf8proc_option_t options,
                      std::string& out) {
  if (begin == end) return;
  utf8proc_uint8_t* result = nullptr;
  const auto* start = reinterpret_cast<const utf8proc_uint8_t*>(text.data() + begin);
  const utf8proc_ssize_t n = utf8proc_map(start, static_cast<utf8proc_ssize_t>(end - begin), &result, options);
  if (n < 0) {  // cannot happen on a valid run; keep the text rather than lose it
    out.append(text, begin, end - begin);
    return;
  }
  out.append(reinterpret_cast<const char*>(result), static_cast<std::size_t>(n));
  std::free(result);
}

void appendUtf8(uint32_t cp, std::string& out) {
  utf8proc_uint8_t buffer[4];
  const utf8proc_ssize_t n = utf8proc_encode_char(static_cast<utf8proc_int32_t>(cp), buffer);
  out.append(reinterpret_cast<const char*>(buffer), static_cast<std::size_t>(n));
}

}  // namespace

std::string normalize(const std::string& text, NormalForm form) {
  const utf8proc_option_t options = optionsFor(form);
  std::string out;
  out.reserve(text.size());
  std::size_t runStart = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t len = 0;
    if (decodeUtf8(text.data(), text.size(), pos, len) == kInvalidCodePoint) {
      appendNormalized(text, runStart, pos, options, out);
      out += text[pos];
      runStart = pos + 1;
    }
    pos += len;
  }
  appendNormalized(text, runStart, text.size(), options, out);
  return out;
}

std::string lowercase(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t len = 0;
    const uint32_t cp = decodeUtf8(text.data(), text.size(), pos, len);
    if (cp == kInvalidCodePoint)
      out += text[pos];
    else if (cp == 0x130)  // İ: the one multi-character lowercase mapping of a single char
      out += "i\xCC\x87";
    else
      appendUtf8(static_cast<uint32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp))), out);
    pos += len;
  }
  return out;
}

}  // namespace plab::unicode
