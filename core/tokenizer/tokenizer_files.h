#pragma once
// Shared by the tokenizer loaders: reading JSON files with errors that name
// them, and choosing the document separator (EOS) token.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace plab {

class BpeTokenizer;

// The bytes of a tokenizer file; throws TokenizerError naming the file when
// it is missing, unreadable, or not a regular file (a directory, a FIFO).
std::string readTokenizerFile(const std::filesystem::path& path);

// As readTokenizerFile, and also when the file is not JSON.
nlohmann::json readTokenizerJsonFile(const std::filesystem::path& path);

// A token id read from JSON: a whole number in [0, 2^31 - 1]. Anything else
// (3e22, -1, 2.5, 18446744073709551615, "7") throws TokenizerError naming
// `what` and the value, before any conversion (a double past int64's range
// cast to it is undefined behaviour).
int64_t tokenIdFromJson(const nlohmann::json& value, const std::string& what);

// The first of <|endoftext|>, <|end_of_text|>, </s>, <|im_end|>, <|eot_id|>
// that is one of the tokenizer's added tokens; none when it has none of them
// (an ordinary vocab entry spelled "</s>", as Gemma's, is text, not an EOS).
// Such a guess is not the tokenizer's own EOS (eosIsTokenizers() false).
void chooseDefaultEos(BpeTokenizer& tokenizer);

// A special-token field of tokenizer_config.json ("eos_token", ...): a
// string or {"content": ...}; nullopt when the file or field is absent
// (a folder or FIFO in the file's place is an error).
std::optional<std::string> configuredSpecialToken(const std::filesystem::path& tokenizerConfig, const char* field);

// The special tokens a model folder names for transformers, in the order it
// registers them: tokenizer_config.json's added_tokens_decoder (by id), then
// bos, eos, unk, sep, pad, cls and mask_token, then the other "*_token"
// fields with a token as value, then additional_special_tokens /
// extra_special_tokens. Read from tokenizer_config.json, each field
// overridden by special_tokens_map.json. `defaults` fills named fields
// neither file gives (GPT2Tokenizer's <|endoftext|> for bos/eos/unk).
struct NamedSpecialToken {
  std::string field;    // "eos_token", ...; "" for the additional ones
  std::string content;
  std::string file;     // the file that named it
};
std::vector<NamedSpecialToken> namedSpecialTokens(const std::filesystem::path& modelDir,
                                                  const std::vector<NamedSpecialToken>& defaults = {});

}  // namespace plab
