// Which tokenizer a model folder carries: tokenizer.json first, GPT-2's
// vocab.json + merges.txt otherwise; none at all is an error (training a
// pretrained model with the byte tokenizer would silently waste it).
#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/tokenizer_files.h"
#include "util/errors.h"

namespace plab {

namespace fs = std::filesystem;

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
  // The model's own eos_token, when tokenizer_config.json names a known one,
  // beats the built-in guess.
  auto& bpe = static_cast<BpeTokenizer&>(*tokenizer);
  if (auto eos = configuredSpecialToken(modelDir / "tokenizer_config.json", "eos_token"))
    if (auto id = bpe.tokenId(*eos)) bpe.setEosId(id);
  return tokenizer;
}

}  // namespace plab
