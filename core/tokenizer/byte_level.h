#pragma once
// GPT-2's byte <-> unicode mapping: every byte gets a printable character so
// that BPE vocabularies can be stored as JSON strings ("Ġ" is the space).
#include <array>
#include <cstdint>
#include <string>

namespace plab::byte_level {

// UTF-8 spelling of the character standing for each byte.
const std::array<std::string, 256>& byteToUnicode();

// Back to raw bytes: every mapped character becomes its byte; characters
// outside the map (not produced by byteToUnicode) are copied unchanged.
std::string decodeToBytes(const std::string& mapped);

// Maps every byte of `raw` to its character.
std::string encodeBytes(const std::string& raw);

}  // namespace plab::byte_level
