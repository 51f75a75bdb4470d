// Which tokenizer a model folder carries: tokenizer.json first, GPT-2's
// vocab.json + merges.txt otherwise; none at all is an error (training a
// pretrained model with the byte tokenizer would silently waste it).
//
// The EOS put between documents, in transformers' order: tokenizer_config.json's
// eos_token (when the tokenizer knows it), else config.json's eos_token_id,
// else generation_config.json's (a list gives its first id), else the loader's
// guess among the added tokens (<|endoftext|>, </s>, ...), never an ordinary
// vocab entry: Gemma's vocab spells "</s>" as plain text.
#include "model/model_config.h"
#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/tokenizer_files.h"
#include "util/errors.h"

namespace plab {

namespace fs = std::filesystem;

namespace {

// eos_token_id of a model folder's config.json or generation_config.json,
// checked against the tokenizer; nullopt when the file or field is absent.
std::optional<int64_t> configuredEosId(const fs::path& file, const BpeTokenizer& tokenizer) {
  std::error_code ec;
  if (!fs::exists(file, ec)) return std::nullopt;
  const nlohmann::json config = readConfigJsonFile(file);
  const std::optional<int64_t> id = tokenIdField(config, "eos_token_id", tokenizer.vocabSize(), file.string());
  if (id && !tokenizer.hasToken(*id))
    throw ConfigError(file.string() + ": field 'eos_token_id' names id " + std::to_string(*id) +
                      ", which the tokenizer has no token for");
  return id;
}

void chooseModelEos(const fs::path& modelDir, BpeTokenizer& tokenizer) {
  if (auto eos = configuredSpecialToken(modelDir / "tokenizer_config.json", "eos_token"))
    if (auto id = tokenizer.tokenId(*eos)) {
      tokenizer.setEosId(id);
      return;
    }
  for (const char* name : {"config.json", "generation_config.json"})
    if (auto id = configuredEosId(modelDir / name, tokenizer)) {
      tokenizer.setEosId(id);
      return;
    }
}

}  // namespace

bool hasTokenizerFiles(const fs::path& modelDir) {
  std::error_code ec;
  return fs::exists(modelDir / "tokenizer.json", ec) ||
         (fs::exists(modelDir / "vocab.json", ec) && fs::exists(modelDir / "merges.txt", ec));
}

std::unique_ptr<Tokenizer> loadTokenizerForModel(const fs::path& modelDir) {
  std::error_code ec;
  std::unique_ptr<Tokenizer> tokenizer;
  if (fs::exists(modelDir / "tokenizer.json", ec))
    tokenizer = loadTokenizerJson(modelDir / "tokenizer.json");
  else if (fs::exists(modelDir / "vocab.json", ec) && fs::exists(modelDir / "merges.txt", ec))
    tokenizer = loadVocabAndMerges(modelDir / "vocab.json", modelDir / "merges.txt");
  else
    throw TokenizerError(modelDir.string() +
                         " has no tokenizer (neither tokenizer.json nor vocab.json + merges.txt); set the run's "
                         "model.tokenizer to \"bytes\" to train it with the byte tokenizer on purpose");
  chooseModelEos(modelDir, static_cast<BpeTokenizer&>(*tokenizer));
  return tokenizer;
}

}  // namespace plab
