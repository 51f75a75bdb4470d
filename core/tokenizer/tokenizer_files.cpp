#include "tokenizer/tokenizer_files.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <utility>

#include "tokenizer/bpe_tokenizer.h"
#include "util/errors.h"
#include "util/json_limits.h"
#include "util/regular_file.h"

namespace plab {

using nlohmann::json;

std::string readTokenizerFile(const std::filesystem::path& path) {
  std::string problem;
  std::optional<std::string> text = readRegularFile(path, problem);
  if (!text) throw TokenizerError("cannot read tokenizer file " + path.string() + ": " + problem);
  return std::move(*text);
}

json readTokenizerJsonFile(const std::filesystem::path& path) {
  const std::string text = readTokenizerFile(path);
  if (const std::string nesting = jsonNestingProblem(text); !nesting.empty())
    throw TokenizerError(path.string() + ": " + nesting);
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw TokenizerError("invalid JSON in " + path.string() + ": " + jsonErrorText(e, text));
  }
}

int64_t tokenIdFromJson(const json& value, const std::string& what) {
  constexpr int64_t kMaxId = std::numeric_limits<int32_t>::max();
  // Unsigned first: a value above int64's range is unsigned in the parser and
  // would wrap when read as signed.
  if (value.is_number_unsigned() && value.get<uint64_t>() <= uint64_t(kMaxId)) return int64_t(value.get<uint64_t>());
  if (value.is_number_integer() && !value.is_number_unsigned()) {
    const int64_t id = value.get<int64_t>();
    if (id >= 0 && id <= kMaxId) return id;
  }
  throw TokenizerError(what + " is not a token id: " + jsonExcerpt(value) + " (ids are whole numbers from 0 to " +
                       std::to_string(kMaxId) + ")");
}

void chooseDefaultEos(BpeTokenizer& tokenizer) {
  static const char* const candidates[] = {"<|endoftext|>", "<|end_of_text|>", "</s>", "<|im_end|>", "<|eot_id|>"};
  for (const char* candidate : candidates)
    if (auto id = tokenizer.addedTokenId(candidate)) {
      tokenizer.setEos(id, std::string("the added token '") + candidate + "' (a guess: no file names an EOS)", false);
      return;
    }
  tokenizer.setEos(std::nullopt, "", false);
}

namespace {

// A token value as transformers takes it: a string, or an object with a
// string "content" (an AddedToken as tokenizer_config.json or
// special_tokens_map.json spell it).
template <typename Json>
std::optional<std::string> tokenContent(const Json& token) {
  if (token.is_string()) return token.template get<std::string>();
  if (token.is_object() && token.contains("content") && token["content"].is_string())
    return token["content"].template get<std::string>();
  return std::nullopt;
}

nlohmann::ordered_json readOrderedJsonIfPresent(const std::filesystem::path& path) {
  std::error_code ec;  // a folder or FIFO in its place is reported, not skipped
  if (!std::filesystem::exists(path, ec)) return nlohmann::ordered_json::object();
  const std::string text = readTokenizerFile(path);
  if (const std::string nesting = jsonNestingProblem(text); !nesting.empty())
    throw TokenizerError(path.string() + ": " + nesting);
  try {
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(text);
    return j.is_object() ? j : nlohmann::ordered_json::object();
  } catch (const nlohmann::json::exception& e) {
    throw TokenizerError("invalid JSON in " + path.string() + ": " + jsonErrorText(e));
  }
}

}  // namespace

std::vector<NamedSpecialToken> namedSpecialTokens(const std::filesystem::path& modelDir,
                                                  const std::vector<NamedSpecialToken>& defaults) {
  static const char* const kNamed[] = {"bos_token", "eos_token", "unk_token", "sep_token",
                                       "pad_token", "cls_token", "mask_token"};
  // Fields in file order, special_tokens_map.json's values over tokenizer_config.json's.
  using ordered = nlohmann::ordered_json;
  std::vector<std::pair<std::string, std::pair<ordered, std::string>>> fields;
  for (const char* file : {"tokenizer_config.json", "special_tokens_map.json"}) {
    const nlohmann::ordered_json j = readOrderedJsonIfPresent(modelDir / file);
    for (const auto& [key, value] : j.items()) {
      auto it = std::find_if(fields.begin(), fields.end(), [&](const auto& f) { return f.first == key; });
      const std::pair<ordered, std::string> entry{value, file};
      if (it == fields.end())
        fields.emplace_back(key, entry);
      else
        it->second = entry;
    }
  }
  std::vector<NamedSpecialToken> out;
  const auto add = [&](const std::string& field, const ordered& value, const std::string& file) {
    if (auto content = tokenContent(value); content && !content->empty()) out.push_back({field, *content, file});
  };
  const auto field = [&](const std::string& key) {
    return std::find_if(fields.begin(), fields.end(), [&](const auto& f) { return f.first == key; });
  };
  if (auto it = field("added_tokens_decoder"); it != fields.end() && it->second.first.is_object()) {
    std::vector<std::pair<long long, ordered>> byId;
    for (const auto& [key, token] : it->second.first.items()) {
      char* end = nullptr;
      const long long id = std::strtoll(key.c_str(), &end, 10);
      if (!key.empty() && end && *end == '\0') byId.emplace_back(id, token);
    }
    std::stable_sort(byId.begin(), byId.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [id, token] : byId) add("added_tokens_decoder", token, it->second.second);
  }
  for (const char* name : kNamed) {
    if (auto it = field(name); it != fields.end()) {
      if (!it->second.first.is_null()) add(name, it->second.first, it->second.second);
      continue;
    }
    for (const NamedSpecialToken& d : defaults)
      if (d.field == name) out.push_back(d);
  }
  const std::string suffix = "_token";
  for (const auto& [key, entry] : fields) {
    const bool named = std::find(std::begin(kNamed), std::end(kNamed), key) != std::end(kNamed);
    if (!named && key.size() > suffix.size() && key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0 &&
        entry.first.is_string())
      add(key, entry.first, entry.second);
  }
  // extra_special_tokens (transformers 5) wins over additional_special_tokens; either a list or, in 5, an object.
  for (const char* key : {"extra_special_tokens", "additional_special_tokens"}) {
    auto it = field(key);
    if (it == fields.end() || it->second.first.is_null()) continue;
    for (const ordered& token : it->second.first) add("", token, it->second.second);
    break;
  }
  return out;
}

std::optional<std::string> configuredSpecialToken(const std::filesystem::path& configPath, const char* field) {
  std::error_code ec;  // a folder or FIFO in its place is reported, not skipped
  if (!std::filesystem::exists(configPath, ec)) return std::nullopt;
  const json config = readTokenizerJsonFile(configPath);
  if (!config.is_object() || !config.contains(field)) return std::nullopt;
  const json& token = config[field];
  if (token.is_string()) return token.get<std::string>();
  if (token.is_object() && token.contains("content") && token["content"].is_string())
    return token["content"].get<std::string>();
  return std::nullopt;
}

}  // namespace plab
