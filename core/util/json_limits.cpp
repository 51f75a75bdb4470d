#include "util/json_limits.h"

#include <set>
#include <vector>

namespace plab {
namespace {

// A SAX pass that only tracks where it is (and, on request, the keys each
// open object has had): the path of a parse error, or of a duplicate key.
class PathTracker : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit PathTracker(bool findDuplicates) : findDuplicates_(findDuplicates) {}

  // At an error, the innermost array is in the element after the last one
  // that began (the failing value never began).
  std::string path(bool atError = false) const {
    std::string out;
    for (size_t i = 0; i < frames_.size(); ++i) {
      const Frame& f = frames_[i];
      if (f.object) {
        if (!f.hasKey) break;
        out += (out.empty() ? "" : ".") + f.key;
      } else {
        const long long index = f.index + (atError && i + 1 == frames_.size() ? 1 : 0);
        if (index < 0) break;
        out += "[" + std::to_string(index) + "]";
      }
    }
    return out;
  }
  const std::string& duplicate() const { return duplicate_; }

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override {
    value();
    frames_.emplace_back(true);
    return true;
  }
  bool key(string_t& k) override {
    Frame& f = frames_.back();
    f.key = textExcerpt(k, 80);
    f.hasKey = true;
    if (findDuplicates_ && !f.keys.insert(k).second) {
      duplicate_ = path();
      return false;
    }
    return true;
  }
  bool end_object() override { return end(); }
  bool start_array(std::size_t) override {
    value();
    frames_.emplace_back(false);
    return true;
  }
  bool end_array() override { return end(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  struct Frame {
    explicit Frame(bool isObject) : object(isObject) {}
    bool object = false;
    std::string key;
    bool hasKey = false;
    long long index = -1;
    std::set<std::string> keys;
  };
  // A value begins: in an array, the next element.
  bool value() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
    return true;
  }
  bool end() {
    frames_.pop_back();
    return true;
  }

  bool findDuplicates_;
  std::vector<Frame> frames_;
  std::string duplicate_;
};

}  // namespace

std::string jsonPathAtError(std::string_view text) {
  if (!jsonNestingProblem(text).empty()) return "";
  PathTracker tracker(false);
  if (nlohmann::json::sax_parse(text, &tracker, nlohmann::json::input_format_t::json, /*strict=*/true)) return "";
  return tracker.path(/*atError=*/true);
}

std::string jsonDuplicateKey(std::string_view text) {
  if (!jsonNestingProblem(text).empty()) return "";
  PathTracker tracker(true);
  nlohmann::json::sax_parse(text, &tracker, nlohmann::json::input_format_t::json, /*strict=*/true);
  return tracker.duplicate();
}

std::string jsonErrorText(const nlohmann::json::exception& e, std::string_view text) {
  const std::string path = jsonPathAtError(text);
  std::string message = jsonErrorText(e);
  if (path.empty()) return message;
  constexpr std::string_view kBeyond = " is beyond the range of a double";
  if (const auto at = message.find(kBeyond); at != std::string::npos && message.rfind("number ", 0) == 0)
    return message.substr(0, at) + " in '" + path + "'" + message.substr(at);
  return message + " (in '" + path + "')";
}

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
