#include "tokenizer/pretokenizer.h"

#include <cstdint>

#include "tokenizer/unicode_tables.h"

namespace plab {

const char* const kGpt2SplitRegex =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
const char* const kLlama3SplitRegex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kQwen2SplitRegex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

std::optional<SplitRule> splitRuleForRegex(const std::string& pattern) {
  if (pattern == kGpt2SplitRegex) return SplitRule::Gpt2;
  if (pattern == kLlama3SplitRegex) return SplitRule::Llama3;
  if (pattern == kQwen2SplitRegex) return SplitRule::Qwen2;
  return std::nullopt;
}

namespace {

enum class CharClass { Letter, Number, Space, Other };

class Scanner {
 public:
  Scanner(std::string_view text, SplitRule rule) : rule_(rule) {
    for (std::size_t pos = 0; pos < text.size();) {
      std::size_t len = 0;
      const uint32_t cp = unicode::decodeUtf8(text.data(), text.size(), pos, len);
      cps_.push_back(cp);
      offsets_.push_back(pos);
      pos += len;
    }
    offsets_.push_back(text.size());
  }

  void split(std::vector<TextSpan>& pieces) const {
    pieces.clear();
    const std::size_t n = cps_.size();
    for (std::size_t i = 0; i < n;) {
      std::size_t len = rule_ == SplitRule::Gpt2 ? matchGpt2(i) : matchLlama3(i);
      if (len == 0) len = 1;  // unreachable: every class is covered; keeps the loop finite
      pieces.push_back({offsets_[i], offsets_[i + len]});
      i += len;
    }
  }

 private:
  CharClass cls(std::size_t i) const {
    const uint32_t c = cps_[i];
    if (c == unicode::kInvalidCodePoint) return CharClass::Other;
    if (unicode::isLetter(c)) return CharClass::Letter;
    if (unicode::isNumber(c)) return CharClass::Number;
    if (unicode::isWhitespace(c)) return CharClass::Space;
    return CharClass::Other;
  }
  bool is(std::size_t i, CharClass c) const { return i < cps_.size() && cls(i) == c; }
  bool isNewline(std::size_t i) const { return cps_[i] == '\r' || cps_[i] == '\n'; }

  // 's|'t|'re|'ve|'m|'ll|'d, optionally ASCII case-insensitive.
  std::size_t contraction(std::size_t i, bool ignoreCase) const {
    const std::size_t n = cps_.size();
    if (cps_[i] != '\'' || i + 1 >= n) return 0;
    const auto fold = [&](std::size_t k) -> uint32_t {
      uint32_t c = cps_[k];
      if (ignoreCase && c >= 'A' && c <= 'Z') c += 'a' - 'A';
      return c;
    };
    const uint32_t c1 = fold(i + 1);
    if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd') return 2;
    if (i + 2 < n) {
      const uint32_t c2 = fold(i + 2);
      if ((c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') || (c1 == 'l' && c2 == 'l')) return 3;
    }
    return 0;
  }

  std::size_t runOf(std::size_t j, CharClass c) const {
    std::size_t k = j;
    while (is(k, c)) ++k;
    return k;
  }

  // \s+(?!\S) then \s+ : a whitespace run leaves its last space to the next
  // piece when a non-space follows (and it has more than one character).
  std::size_t trailingSpaceRule(std::size_t i) const {
    const std::size_t end = runOf(i, CharClass::Space);
    const std::size_t k = end - i;
    if (k == 0) return 0;
    if (end == cps_.size()) return k;
    return k >= 2 ? k - 1 : 1;
  }

  std::size_t matchGpt2(std::size_t i) const {
    const std::size_t n = cps_.size();
    if (std::size_t len = contraction(i, false)) return len;
    const bool space = cps_[i] == ' ';
    for (CharClass c : {CharClass::Letter, CharClass::Number, CharClass::Other}) {
      // ` ?X+`: an optional leading U+0020 when an X follows it.
      const std::size_t j = i + (space && i + 1 < n && is(i + 1, c) ? 1 : 0);
      if (is(j, c)) return runOf(j, c) - i;
    }
    return trailingSpaceRule(i);
  }

  std::size_t matchLlama3(std::size_t i) const {
    const std::size_t n = cps_.size();
    if (std::size_t len = contraction(i, true)) return len;
    // [^\r\n\p{L}\p{N}]?\p{L}+
    const CharClass c0 = cls(i);
    const bool prefixOk = !isNewline(i) && c0 != CharClass::Letter && c0 != CharClass::Number;
    const std::size_t j = i + (prefixOk && i + 1 < n && is(i + 1, CharClass::Letter) ? 1 : 0);
    if (is(j, CharClass::Letter)) return runOf(j, CharClass::Letter) - i;
    // \p{N}{1,3} (Qwen2: \p{N})
    if (c0 == CharClass::Number) {
      const std::size_t maxDigits = rule_ == SplitRule::Qwen2 ? 1 : 3;
      std::size_t k = i;
      while (k < n && k - i < maxDigits && is(k, CharClass::Number)) ++k;
      return k - i;
    }
    // ` ?[^\s\p{L}\p{N}]+[\r\n]*`
    const std::size_t o = i + (cps_[i] == ' ' && i + 1 < n && is(i + 1, CharClass::Other) ? 1 : 0);
    if (is(o, CharClass::Other)) {
      std::size_t k = runOf(o, CharClass::Other);
      while (k < n && isNewline(k)) ++k;
      return k - i;
    }
    // \s*[\r\n]+ : a whitespace run up to and including its last newline.
    if (c0 == CharClass::Space) {
      const std::size_t end = runOf(i, CharClass::Space);
      for (std::size_t k = end; k > i; --k)
        if (isNewline(k - 1)) return k - i;
    }
    return trailingSpaceRule(i);
  }

  SplitRule rule_;
  std::vector<uint32_t> cps_;
  std::vector<std::size_t> offsets_;  // byte offset of each code point, plus the end
};

}  // namespace

void preTokenizeSpans(std::string_view text, SplitRule rule, std::vector<TextSpan>& pieces) {
  Scanner(text, rule).split(pieces);
}

std::vector<std::string> preTokenize(const std::string& text, SplitRule rule) {
  std::vector<TextSpan> spans;
  preTokenizeSpans(text, rule, spans);
  std::vector<std::string> pieces;
  for (const TextSpan& s : spans) pieces.push_back(text.substr(s.begin, s.end - s.begin));
  return pieces;
}

std::size_t lastSpaceAfterNonSpace(std::string_view text, std::size_t lookahead) {
  // Why a cut there is safe: the piece holding the character before p is a
  // contraction or a run of letters, numbers or other characters, and none
  // of them takes a space except as its first character; no rule looks
  // behind, and the whitespace lookahead `\s+(?!\S)` only concerns runs
  // that end in whitespace, which the first piece does not.
  if (text.size() < lookahead + 1) return 0;
  for (std::size_t p = text.size() - lookahead; p >= 1; --p) {
    if (text[p] != ' ') continue;
    std::size_t start = p - 1;  // back over UTF-8 continuation bytes to the start of the character
    while (start > 0 && p - start < 4 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
    std::size_t len = 0;
    const uint32_t cp = unicode::decodeUtf8(text.data(), p, start, len);
    if (cp != unicode::kInvalidCodePoint && start + len == p && !unicode::isWhitespace(cp)) return p;
  }
  return 0;
}

}  // namespace plab
