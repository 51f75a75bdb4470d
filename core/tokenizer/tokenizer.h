#pragma once
// Tokenizers: Hugging Face tokenizer.json BPE (byte-level: GPT-2, Llama-3,
// Qwen2/Qwen3; SentencePiece style: Llama-2, TinyLlama, Mistral), GPT-2's
// vocab.json + merges.txt, and a byte tokenizer for models built from config.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace plab {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  // The text's tokens only (add_special_tokens=False).
  virtual std::vector<int64_t> encode(const std::string& utf8) const = 0;
  // With the post-processor's special tokens around it, as Hugging Face's
  // add_special_tokens=True (Llama-3 and Llama-2 put their BOS first).
  virtual std::vector<int64_t> encodeWithSpecialTokens(const std::string& utf8) const { return encode(utf8); }
  virtual std::string decode(const std::vector<int64_t>& ids) const = 0;
  virtual int64_t vocabSize() const = 0;          // including added tokens
  virtual std::optional<int64_t> eosId() const = 0;  // appended between documents
  virtual std::string kind() const = 0;  // "byte-level-bpe", "sentencepiece-bpe" or "bytes"
};

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
// merges.txt. Throws TokenizerError when the folder has neither.
std::unique_ptr<Tokenizer> loadTokenizerForModel(const std::filesystem::path& modelDir);

// True when the folder holds tokenizer.json or vocab.json + merges.txt.
bool hasTokenizerFiles(const std::filesystem::path& modelDir);

}  // namespace plab
