#include "util/base64.h"

#include <array>
#include <cstdint>

namespace plab {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// 0..63 for an alphabet character, 64 for '=', 255 for anything else.
constexpr std::array<uint8_t, 256> decodeTable() {
  std::array<uint8_t, 256> t{};
  for (auto& v : t) v = 255;
  for (uint8_t i = 0; i < 64; ++i) t[static_cast<uint8_t>(kAlphabet[i])] = i;
  t[static_cast<uint8_t>('=')] = 64;
  return t;
}
constexpr std::array<uint8_t, 256> kDecode = decodeTable();

}  // namespace

std::string base64Encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t v = static_cast<uint32_t>(static_cast<uint8_t>(bytes[i])) << 16 |
                       static_cast<uint32_t>(static_cast<uint8_t>(bytes[i + 1])) << 8 |
                       static_cast<uint32_t>(static_cast<uint8_t>(bytes[i + 2]));
    for (int shift : {18, 12, 6, 0}) out.push_back(kAlphabet[(v >> shift) & 63]);
  }
  const size_t left = bytes.size() - i;
  if (left > 0) {
    uint32_t v = static_cast<uint32_t>(static_cast<uint8_t>(bytes[i])) << 16;
    if (left == 2) v |= static_cast<uint32_t>(static_cast<uint8_t>(bytes[i + 1])) << 8;
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(left == 2 ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

std::optional<std::string> base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    const uint8_t a = kDecode[static_cast<uint8_t>(text[i])], b = kDecode[static_cast<uint8_t>(text[i + 1])],
                  c = kDecode[static_cast<uint8_t>(text[i + 2])], d = kDecode[static_cast<uint8_t>(text[i + 3])];
    const bool last = i + 4 == text.size();
    // Padding only at the very end: "xx==" or "xxx=".
    if (a > 63 || b > 63 || c == 255 || d == 255 || (c == 64 && d != 64) || ((c == 64 || d == 64) && !last))
      return std::nullopt;
    const uint32_t v = uint32_t{a} << 18 | uint32_t{b} << 12 | uint32_t{c == 64 ? 0u : c} << 6 | uint32_t{d == 64 ? 0u : d};
    out.push_back(static_cast<char>((v >> 16) & 0xff));
    if (c != 64) out.push_back(static_cast<char>((v >> 8) & 0xff));
    if (d != 64) out.push_back(static_cast<char>(v & 0xff));
  }
  return out;
}

}  // namespace plab
