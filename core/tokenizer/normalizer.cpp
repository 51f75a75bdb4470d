#include "tokenizer/normalizer.h"

#include "tokenizer/unicode_normalization.h"
#include "tokenizer/unicode_tables.h"
#include "util/errors.h"
#include "util/json_limits.h"

namespace plab {
namespace {

using nlohmann::json;

std::string replaceAll(const std::string& text, const std::string& pattern, const std::string& content) {
  if (pattern.empty()) return text;
  std::string out;
  out.reserve(text.size());
  std::size_t start = 0;
  for (std::size_t hit; (hit = text.find(pattern, start)) != std::string::npos; start = hit + pattern.size()) {
    out.append(text, start, hit - start);
    out += content;
  }
  out.append(text, start, std::string::npos);
  return out;
}

// Removes White_Space characters at either end (Rust's char::is_whitespace).
std::string strip(const std::string& text, bool left, bool right) {
  std::size_t begin = 0, end = text.size();
  if (left)
    while (begin < end) {
      std::size_t len = 0;
      if (!unicode::isWhitespace(unicode::decodeUtf8(text.data(), end, begin, len))) break;
      begin += len;
    }
  if (right)
    while (end > begin) {
      std::size_t start = end - 1;  // back to the first byte of the last character
      while (start > begin && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
      std::size_t len = 0;
      const uint32_t cp = unicode::decodeUtf8(text.data(), end, start, len);
      if (start + len != end || !unicode::isWhitespace(cp)) break;
      end = start;
    }
  return text.substr(begin, end - begin);
}

std::string stringField(const json& j, const char* key, const std::string& source) {
  if (!j.contains(key) || !j[key].is_string())
    throw TokenizerError(source + ": normalizer " + jsonExcerpt(j) + " needs a string '" + key + "'");
  return j[key].get<std::string>();
}

}  // namespace

Normalizer Normalizer::fromJson(const json& j, const std::string& source) {
  Normalizer n;
  if (!j.is_null()) n.add(j, source);
  return n;
}

void Normalizer::add(const json& j, const std::string& source) {
  const std::string type = j.is_object() && j.contains("type") && j["type"].is_string() ? j["type"].get<std::string>() : "";
  if (type == "Sequence") {
    if (!j.contains("normalizers") || !j["normalizers"].is_array())
      throw TokenizerError(source + ": normalizer Sequence without a normalizers list");
    for (const auto& step : j["normalizers"]) add(step, source);
  } else if (type == "NFC") {
    steps_.push_back({Kind::NFC, "", "", false, false});
  } else if (type == "NFD") {
    steps_.push_back({Kind::NFD, "", "", false, false});
  } else if (type == "NFKC") {
    steps_.push_back({Kind::NFKC, "", "", false, false});
  } else if (type == "NFKD") {
    steps_.push_back({Kind::NFKD, "", "", false, false});
  } else if (type == "Lowercase") {
    steps_.push_back({Kind::Lowercase, "", "", false, false});
  } else if (type == "Strip") {
    steps_.push_back({Kind::Strip, "", "", j.value("strip_left", true), j.value("strip_right", true)});
  } else if (type == "Prepend") {
    steps_.push_back({Kind::Prepend, "", stringField(j, "prepend", source), false, false});
  } else if (type == "Replace") {
    const json pattern = j.value("pattern", json());
    if (!pattern.is_object() || !pattern.contains("String") || !pattern["String"].is_string())
      throw TokenizerError(source + ": unsupported Replace normalizer pattern " + jsonExcerpt(pattern) +
                           " (only literal {\"String\": ...} patterns are supported)");
    steps_.push_back({Kind::Replace, pattern["String"].get<std::string>(), stringField(j, "content", source), false,
                      false});
  } else {
    throw TokenizerError(source + ": unsupported normalizer '" + (type.empty() ? jsonExcerpt(j) : type) +
                         "' (supported: NFC, NFD, NFKC, NFKD, Lowercase, Strip, Replace, Prepend, Sequence)");
  }
}

bool Normalizer::prepends() const {
  for (const Step& s : steps_)
    if (s.kind == Kind::Prepend) return true;
  return false;
}

bool Normalizer::onlyMapsCharacters() const {
  for (const Step& s : steps_)
    if (s.kind == Kind::Strip || s.kind == Kind::Replace || s.kind == Kind::Prepend) return false;
  return true;
}

std::string Normalizer::apply(const std::string& input) const {
  std::string text = input;
  for (const Step& s : steps_) {
    switch (s.kind) {
      case Kind::NFC: text = unicode::normalize(text, unicode::NormalForm::NFC); break;
      case Kind::NFD: text = unicode::normalize(text, unicode::NormalForm::NFD); break;
      case Kind::NFKC: text = unicode::normalize(text, unicode::NormalForm::NFKC); break;
      case Kind::NFKD: text = unicode::normalize(text, unicode::NormalForm::NFKD); break;
      case Kind::Lowercase: text = unicode::lowercase(text); break;
      case Kind::Strip: text = strip(text, s.left, s.right); break;
      case Kind::Replace: text = replaceAll(text, s.pattern, s.content); break;
      case Kind::Prepend:
        if (!text.empty()) text = s.content + text;  // as Hugging Face: never on empty text
        break;
    }
  }
  return text;
}

}  // namespace plab
