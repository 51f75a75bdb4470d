// GPT-2's slow-tokenizer files (vocab.json + merges.txt) as a byte-level BPE
// with the GPT-2 split, for model folders that have no tokenizer.json.
#include <sstream>

#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/tokenizer_files.h"
#include "util/errors.h"
#include "util/json_limits.h"

namespace plab {

using nlohmann::json;

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
  spec.preTokenizer.push_back(PreTokenizerStep::scanner(SplitRule::Gpt2));
  // The special tokens (GPT2Tokenizer's default <|endoftext|>, those
  // tokenizer_config.json names) are registered by loadTokenizerForModel.
  auto tokenizer = std::make_unique<BpeTokenizer>(std::move(spec));
  chooseDefaultEos(*tokenizer);
  return tokenizer;
}

}  // namespace plab
