#include "tokenizer/tokenizer_files.h"

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
      tokenizer.setEosId(id);
      return;
    }
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
