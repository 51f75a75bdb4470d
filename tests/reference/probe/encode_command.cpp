// encode TOKENIZER_DIR CASES.json OUT.json: the project's tokenizer of a
// model folder (loadTokenizerForModel: tokenizer.json, tokenizer_config.json's
// eos_token) on each text of CASES.json ({"texts": [...], "piece_bytes": n}).
// For each text: "ids" (encode, add_special_tokens=False), "with_special"
// (encodeWithSpecialTokens, add_special_tokens=True) and "document": the ids
// a training data set stores for the text as one document, streamed through
// DocumentEncoder in pieces of piece_bytes (cut at the tokenizer's safe
// cuts). Also the tokenizer's kind, vocabulary size, EOS (its own, as
// transformers' eos_token_id, and the separator put between documents with
// the warning shown when that is not the tokenizer's own) and the special
// ids put before and after a document.
#include "commands.h"
#include "data/document_encoder.h"
#include "json_files.h"
#include "tokenizer/tokenizer.h"
#include "train/model_loading.h"

namespace plab::probe {

int encodeCommand(const Args& args) {
  if (args.size() != 3) throw UsageError("encode TOKENIZER_DIR CASES.json OUT.json");
  const std::unique_ptr<Tokenizer> tokenizer = loadTokenizerForModel(args[0]);
  const nlohmann::json cases = readJson(args[1]);
  if (!cases.is_object() || !cases.contains("texts") || !cases["texts"].is_array())
    throw std::runtime_error(args[1] + ": expected {\"texts\": [...]}");
  const std::size_t pieceBytes = cases.value("piece_bytes", DocumentEncoder::kDefaultPieceBytes);

  nlohmann::json results = nlohmann::json::array();
  for (const auto& text : cases["texts"]) {
    const std::string utf8 = text.get<std::string>();
    std::vector<int64_t> document;
    DocumentEncoder encoder(
        *tokenizer, [&](const std::vector<int64_t>& ids) { document.insert(document.end(), ids.begin(), ids.end()); },
        pieceBytes);
    encoder.begin();
    encoder.add(utf8);
    encoder.end();
    results.push_back({{"ids", tokenizer->encode(utf8)},
                       {"with_special", tokenizer->encodeWithSpecialTokens(utf8)},
                       {"document", document}});
  }
  const std::optional<int64_t> eos = tokenizer->eosId();
  const bool own = tokenizer->eosIsTokenizers();
  writeJson(args[2], {{"kind", tokenizer->kind()},
                      {"vocab_size", tokenizer->vocabSize()},
                      {"eos_id", eos ? nlohmann::json(*eos) : nlohmann::json()},
                      {"tokenizer_eos_id", eos && own ? nlohmann::json(*eos) : nlohmann::json()},
                      {"separator_warning", documentSeparatorWarning(*tokenizer)},
                      {"special_before", tokenizer->specialIdsBefore()},
                      {"special_after", tokenizer->specialIdsAfter()},
                      {"cases", results}});
  return 0;
}

}  // namespace plab::probe
