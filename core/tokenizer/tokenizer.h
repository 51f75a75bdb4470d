#pragma once
// Tokenizers: Hugging Face tokenizer.json BPE (byte-level: GPT-2, Llama-3,
// Qwen2/Qwen3; SentencePiece style: Llama-2, TinyLlama, Mistral), GPT-2's
// vocab.json + merges.txt, and a byte tokenizer for models built from config.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plab {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  // The text's tokens only (add_special_tokens=False).
  virtual std::vector<int64_t> encode(const std::string& utf8) const = 0;
  // With the post-processor's special tokens around it, as Hugging Face's
  // add_special_tokens=True (Llama-3 and Llama-2 put their BOS first):
  // specialIdsBefore() + encode(utf8) + specialIdsAfter().
  std::vector<int64_t> encodeWithSpecialTokens(const std::string& utf8) const;
  virtual std::vector<int64_t> specialIdsBefore() const { return {}; }
  virtual std::vector<int64_t> specialIdsAfter() const { return {}; }
  // For encoding a long text piece by piece: the last position p in
  // [1, text.size()] where `text` may be cut, so that encode(text[0, p))
  // followed by the ids of everything from p on (text[p, size) and whatever
  // comes after it) equals the ids of the whole; 0 when `text` has none (read
  // on, or encode the whole at once). Default: no cut is known.
  virtual std::size_t lastSafeCut(std::string_view text) const {
    (void)text;
    return 0;
  }
  virtual std::string decode(const std::vector<int64_t>& ids) const = 0;
  virtual int64_t vocabSize() const = 0;          // including added tokens
  virtual std::optional<int64_t> eosId() const = 0;  // appended between documents
  // Where eosId() came from ("tokenizer_config.json eos_token '</s>'",
  // "config.json eos_token_id", ...), and whether it is the tokenizer's own
  // EOS, the one transformers' AutoTokenizer reports as eos_token_id (else
  // it is a separator chosen for a tokenizer that names none).
  virtual std::string eosOrigin() const { return ""; }
  virtual bool eosIsTokenizers() const { return eosId().has_value(); }
  virtual std::string kind() const = 0;  // "byte-level-bpe", "sentencepiece-bpe" or "bytes"
};

inline std::vector<int64_t> Tokenizer::encodeWithSpecialTokens(const std::string& utf8) const {
  std::vector<int64_t> ids = specialIdsBefore();
  const std::vector<int64_t> body = encode(utf8);
  ids.insert(ids.end(), body.begin(), body.end());
  const std::vector<int64_t> after = specialIdsAfter();
  ids.insert(ids.end(), after.begin(), after.end());
  return ids;
}

// ids 0..255 are the raw bytes, 256 is <|endoftext|>; vocabSize() == 257.
std::unique_ptr<Tokenizer> makeByteTokenizer();

// Parses tokenizer.json (model.type "BPE": byte-level or SentencePiece
// style, normalizer, post-processor, added_tokens). Throws TokenizerError
// naming the file and the unsupported part on anything else.
std::unique_ptr<Tokenizer> loadTokenizerJson(const std::filesystem::path& tokenizerJson);

// GPT-2's slow-tokenizer files: vocab.json + merges.txt (byte-level BPE with
// the GPT-2 split); special tokens of tokenizer_config.json in the same
// folder are matched as added tokens.
std::unique_ptr<Tokenizer> loadVocabAndMerges(const std::filesystem::path& vocabJson,
                                              const std::filesystem::path& mergesTxt);

// The tokenizer of a model folder: tokenizer.json, else vocab.json +
// merges.txt. Throws TokenizerError when the folder has neither. As
// transformers' AutoTokenizer, every special token tokenizer_config.json
// and special_tokens_map.json name (eos_token, pad_token, ...,
// additional_special_tokens) becomes a special added token, matched in the
// text, with its vocabulary id or, when it has none, the next free id. Its
// EOS: the eos_token so named. A tokenizer that names none has no EOS of its
// own; the separator put between documents is then config.json's
// eos_token_id, else generation_config.json's (the first of a list; ids the
// tokenizer has no token for are passed over), else an added token such as
// <|endoftext|> or </s>, else none; eosOrigin() says which.
std::unique_ptr<Tokenizer> loadTokenizerForModel(const std::filesystem::path& modelDir);

// True when the folder holds tokenizer.json or vocab.json + merges.txt.
bool hasTokenizerFiles(const std::filesystem::path& modelDir);

}  // namespace plab
