#pragma once
// Unicode normalisation forms and lowercasing through utf8proc (Debian's
// libutf8proc), so the tables follow a maintained library, not ours.
// Bytes that are not valid UTF-8 are kept as they are; the valid runs
// between them are normalised.
#include <string>

namespace plab::unicode {

enum class NormalForm { NFC, NFD, NFKC, NFKD };

std::string normalize(const std::string& utf8, NormalForm form);

// Lowercase per character as Rust's char::to_lowercase (what the Hugging Face
// Lowercase normalizer calls): no final-sigma rule, U+0130 -> "i\u0307".
std::string lowercase(const std::string& utf8);

}  // namespace plab::unicode
