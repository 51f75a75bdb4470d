#pragma once
// The "normalizer" of a Hugging Face tokenizer.json as a list of steps run in
// order on each piece of text between added tokens: NFC, NFD, NFKC, NFKD,
// Lowercase, Strip, Replace (literal pattern), Prepend, and Sequence of them.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace plab {

class Normalizer {
 public:
  // null -> no normalisation. Throws TokenizerError naming `source` and the
  // unsupported type (BertNormalizer, Precompiled, a Regex Replace, ...).
  static Normalizer fromJson(const nlohmann::json& j, const std::string& source);

  std::string apply(const std::string& text) const;
  bool empty() const { return steps_.empty(); }
  // True when every step maps characters on their own or with their
  // combining marks (NFC, NFD, NFKC, NFKD, Lowercase; or no step): text cut
  // before a U+0020 space then normalizes to the same bytes in two pieces as
  // whole, and the cut stays before a space that follows a non-space.
  bool onlyMapsCharacters() const;
  // True when a Prepend step is present (SentencePiece's leading "▁").
  bool prepends() const;

 private:
  enum class Kind { NFC, NFD, NFKC, NFKD, Lowercase, Strip, Replace, Prepend };
  struct Step {
    Kind kind;
    std::string pattern;  // Replace: literal text to find
    std::string content;  // Replace: replacement; Prepend: prefix
    bool left = false, right = false;  // Strip
  };
  void add(const nlohmann::json& j, const std::string& source);
  std::vector<Step> steps_;
};

}  // namespace plab
