#include "tokenizer/byte_level.h"

#include <vector>

#include "tokenizer/unicode_tables.h"

namespace plab::byte_level {

namespace {

std::string utf8(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

struct Tables {
  std::array<uint32_t, 256> codePoint{};
  std::array<std::string, 256> spelling;
  std::vector<int> byteOf;  // indexed by code point, -1 when unmapped

  Tables() {
    // Printable Latin-1 bytes map to themselves; the rest to 256, 257, ...
    std::array<bool, 256> printable{};
    for (int b = '!'; b <= '~'; ++b) printable[b] = true;
    for (int b = 0xA1; b <= 0xAC; ++b) printable[b] = true;
    for (int b = 0xAE; b <= 0xFF; ++b) printable[b] = true;
    uint32_t next = 256;
    for (int b = 0; b < 256; ++b) codePoint[b] = printable[b] ? static_cast<uint32_t>(b) : next++;
    byteOf.assign(next, -1);
    for (int b = 0; b < 256; ++b) {
      spelling[b] = utf8(codePoint[b]);
      byteOf[codePoint[b]] = b;
    }
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

const std::array<std::string, 256>& byteToUnicode() { return tables().spelling; }

std::string decodeToBytes(const std::string& mapped) {
  const Tables& t = tables();
  std::string out;
  out.reserve(mapped.size());
  for (std::size_t pos = 0; pos < mapped.size();) {
    std::size_t len = 0;
    const uint32_t cp = unicode::decodeUtf8(mapped.data(), mapped.size(), pos, len);
    if (cp < t.byteOf.size() && t.byteOf[cp] >= 0)
      out += static_cast<char>(t.byteOf[cp]);
    else
      out.append(mapped, pos, len);
    pos += len;
  }
  return out;
}

std::string encodeBytes(const std::string& raw) {
  const auto& spelling = tables().spelling;
  std::string out;
  out.reserve(raw.size() * 2);
  for (unsigned char b : raw) out += spelling[b];
  return out;
}

}  // namespace plab::byte_level
