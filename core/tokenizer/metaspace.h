#pragma once
// SentencePiece's word boundary marker as the Hugging Face Metaspace
// pre-tokenizer applies it: spaces become "▁" (U+2581), a "▁" is prepended
// (always, only to the start of the input, or never) and, with split, the
// text is cut before every "▁".
#include <string>
#include <vector>

namespace plab {

struct Metaspace {
  enum class Prepend { Always, First, Never };
  std::string replacement = "\xE2\x96\x81";
  Prepend prepend = Prepend::Always;
  bool split = true;

  // `atInputStart`: the text begins at offset 0 of the input (Prepend::First).
  std::vector<std::string> apply(const std::string& text, bool atInputStart) const;
};

}  // namespace plab
