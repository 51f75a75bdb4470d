#include "util/json_limits.h"

namespace plab {

std::string jsonNestingProblem(std::string_view text) {
  int depth = 0;
  bool inString = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        return "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels (at byte " + std::to_string(i) +
               ")";
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return {};
}

std::string textExcerpt(std::string_view text, size_t maxChars) {
  static const char* const kHex = "0123456789abcdef";
  std::string out;
  size_t i = 0;
  for (; i < text.size() && out.size() < maxChars; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c >= 0x7f) out += std::string("\\x") + kHex[c >> 4] + kHex[c & 15];
    else out += char(c);
  }
  return i < text.size() ? out + "..." : out;
}

std::string jsonErrorText(const nlohmann::json::exception& e) {
  std::string_view what = e.what();
  if (const auto tag = what.find("] "); what.substr(0, 16) == "[json.exception." && tag != std::string_view::npos)
    what.remove_prefix(tag + 2);
  constexpr std::string_view kOverflow = "number overflow parsing '";
  if (e.id == 406 && what.substr(0, kOverflow.size()) == kOverflow) {
    std::string_view number = what.substr(kOverflow.size());
    if (!number.empty() && number.back() == '\'') number.remove_suffix(1);
    return "number " + textExcerpt(number, 40) + " is beyond the range of a double (about 1.8e308)";
  }
  return textExcerpt(what, 200);
}

std::string jsonExcerpt(const nlohmann::json& value, size_t maxChars) {
  return textExcerpt(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), maxChars);
}

}  // namespace plab
