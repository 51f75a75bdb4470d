// GPT-2's slow-tokenizer files (vocab.json + merges.txt) as a byte-level BPE
// with the GPT-2 split, for model folders that have no tokenizer.json.
#include <sstream>

#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/tokenizer_files.h"
#include "util/errors.h"
#include "util/json_limits.h"

namespace plab {

namespace {

using nlohmann::json;

// Special tokens named by tokenizer_config.json (bos/eos/unk/pad and
// added_tokens_decoder) that exist in the vocab: matched as added tokens,
// as the transformers slow tokenizer does.
std::vector<std::pair<std::string, int64_t>> specialTokens(const std::filesystem::path& folder, const BpeSpec& spec) {
  std::vector<std::string> names = {"<|endoftext|>"};
  const auto config = folder / "tokenizer_config.json";
  for (const char* field : {"bos_token", "eos_token", "unk_token", "pad_token"})
    if (auto name = configuredSpecialToken(config, field)) names.push_back(*name);
  std::error_code ec;
  if (std::filesystem::exists(config, ec)) {
    const json j = readTokenizerJsonFile(config);
    if (j.is_object() && j.contains("added_tokens_decoder") && j["added_tokens_decoder"].is_object())
      for (const auto& [id, token] : j["added_tokens_decoder"].items())
        if (token.is_object() && token.contains("content") && token["content"].is_string())
          names.push_back(token["content"].get<std::string>());
  }
  std::vector<std::pair<std::string, int64_t>> out;
  for (const auto& name : names)
    if (auto it = spec.vocab.find(name); it != spec.vocab.end() && !name.empty()) out.emplace_back(name, it->second);
  return out;
}

}  // namespace

std::unique_ptr<Tokenizer> loadVocabAndMerges(const std::filesystem::path& vocabJson,
                                              const std::filesystem::path& mergesTxt) {
  BpeSpec spec;
  spec.source = vocabJson.string() + " + " + mergesTxt.filename().string();
  const json vocab = readTokenizerJsonFile(vocabJson);
  if (!vocab.is_object()) throw TokenizerError(vocabJson.string() + ": expected an object of token -> id");
  for (const auto& [token, id] : vocab.items()) {
    spec.vocab.emplace(token, tokenIdFromJson(id, vocabJson.string() + ": id of '" + textExcerpt(token) + "'"));
  }
  std::istringstream in(readTokenizerFile(mergesTxt));
  std::string line;
  for (int lineNumber = 1; std::getline(in, line); ++lineNumber) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || (lineNumber == 1 && line.rfind("#version", 0) == 0)) continue;
    const auto space = line.find(' ');
    if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos)
      throw TokenizerError(mergesTxt.string() + ":" + std::to_string(lineNumber) + ": malformed merge '" + line + "'");
    spec.merges.emplace_back(line.substr(0, space), line.substr(space + 1));
  }
  spec.byteLevel = true;
  spec.splitRules.push_back(SplitRule::Gpt2);
  spec.addedTokens = specialTokens(vocabJson.parent_path(), spec);
  auto tokenizer = std::make_unique<BpeTokenizer>(std::move(spec));
  chooseDefaultEos(*tokenizer);
  return tokenizer;
}

}  // namespace plab
