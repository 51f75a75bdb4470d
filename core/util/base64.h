#pragma once
// Base64 (RFC 4648, with padding) for binary columns inside JSON files: a
// run index carries each step's figures as packed little-endian numbers, so
// that listing a thousand runs parses a few strings per run instead of a
// JSON number per figure. The decoder refuses anything the encoder would not
// write (other characters, a length that is not a multiple of 4, padding in
// the middle). Torch-free and Qt-free.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace plab {

std::string base64Encode(std::string_view bytes);
// The bytes, or nothing when text is not base64 as base64Encode writes it.
std::optional<std::string> base64Decode(std::string_view text);

}  // namespace plab
