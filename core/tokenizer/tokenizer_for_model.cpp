// Which tokenizer a model folder carries: tokenizer.json first, GPT-2's
// vocab.json + merges.txt otherwise; none at all is an error (training a
// pretrained model with the byte tokenizer would silently waste it).
//
// The special tokens and the EOS as transformers' AutoTokenizer resolves
// them (tokenizer.h, namedSpecialTokens). For a tokenizer that names no EOS
// (AutoTokenizer's eos_token_id is None) the separator put between
// documents is chosen here: config.json's eos_token_id, else
// generation_config.json's (a list gives its first id), else the loader's
// guess among the added tokens (<|endoftext|>, </s>, ...), never an ordinary
// vocab entry (Gemma's vocab spells "</s>" as plain text); eosOrigin() says
// which, and that it is not the tokenizer's own.
#include "model/model_config.h"
#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/tokenizer_files.h"
#include "util/errors.h"
#include "util/json_limits.h"

namespace plab {

namespace fs = std::filesystem;

namespace {

// eos_token_id of a model folder's config.json or generation_config.json
// when it is a token of the tokenizer; nullopt when the file or field is
// absent. An unusable value is passed over (transformers' tokenizer never
// reads these files; the model's config only warns about such ids), and
// `skipped` says why.
std::optional<int64_t> configuredEosId(const fs::path& file, const BpeTokenizer& tokenizer, std::string& skipped) {
  std::error_code ec;
  if (!fs::exists(file, ec)) return std::nullopt;
  const nlohmann::json config = readConfigJsonFile(file);
  try {
    const std::optional<int64_t> id = tokenIdField(config, "eos_token_id", tokenizer.vocabSize(), file.string());
    if (id && !tokenizer.hasToken(*id)) {
      skipped += (skipped.empty() ? "" : "; ") + file.filename().string() + "'s eos_token_id " + std::to_string(*id) +
                 " is no token of the tokenizer";
      return std::nullopt;
    }
    return id;
  } catch (const ConfigError& e) {
    skipped += (skipped.empty() ? "" : "; ") + std::string(e.what());
    return std::nullopt;
  }
}

void resolveSpecialTokens(const fs::path& modelDir, BpeTokenizer& tokenizer, bool gpt2Files) {
  std::vector<NamedSpecialToken> defaults;
  if (gpt2Files)  // GPT2Tokenizer's own defaults
    for (const char* field : {"bos_token", "eos_token", "unk_token"})
      defaults.push_back({field, "<|endoftext|>", "GPT2Tokenizer's default"});
  std::optional<int64_t> eos;
  std::string eosOrigin;
  for (const NamedSpecialToken& token : namedSpecialTokens(modelDir, defaults)) {
    const int64_t id = tokenizer.addSpecialToken(token.content);
    if (token.field == "eos_token") {
      eos = id;
      eosOrigin = token.file + " eos_token '" + textExcerpt(token.content) + "'";
    }
  }
  if (eos) {
    tokenizer.setEos(eos, eosOrigin, true);
    return;
  }
  std::string skipped;
  for (const char* name : {"config.json", "generation_config.json"})
    if (auto id = configuredEosId(modelDir / name, tokenizer, skipped)) {
      tokenizer.setEos(id, std::string(name) + " eos_token_id " + std::to_string(*id), false);
      return;
    }
  chooseDefaultEos(tokenizer);
  if (!skipped.empty())
    tokenizer.setEos(tokenizer.eosId(), tokenizer.eosOrigin() + (tokenizer.eosId() ? " (" : "(") + skipped + ")", false);
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
  const bool gpt2Files = !fs::exists(modelDir / "tokenizer.json", ec);
  if (!gpt2Files)
    tokenizer = loadTokenizerJson(modelDir / "tokenizer.json");
  else if (fs::exists(modelDir / "vocab.json", ec) && fs::exists(modelDir / "merges.txt", ec))
    tokenizer = loadVocabAndMerges(modelDir / "vocab.json", modelDir / "merges.txt");
  else
    throw TokenizerError(modelDir.string() +
                         " has no tokenizer (neither tokenizer.json nor vocab.json + merges.txt); set the run's "
                         "model.tokenizer to \"bytes\" to train it with the byte tokenizer on purpose");
  resolveSpecialTokens(modelDir, static_cast<BpeTokenizer&>(*tokenizer), gpt2Files);
  return tokenizer;
}

}  // namespace plab
