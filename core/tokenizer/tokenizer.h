#pragma once
// Tokenizers: Hugging Face tokenizer.json byte-level BPE (GPT-2, Llama-3,
// Qwen2 style) and a byte-level fallback for models built from config.
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
  virtual std::vector<int64_t> encode(const std::string& utf8) const = 0;
  virtual std::string decode(const std::vector<int64_t>& ids) const = 0;
  virtual int64_t vocabSize() const = 0;          // including added tokens
  virtual std::optional<int64_t> eosId() const = 0;  // appended between documents
  virtual std::string kind() const = 0;           // "byte-level-bpe" or "bytes"
};

// ids 0..255 are the raw bytes, 256 is <|endoftext|>; vocabSize() == 257.
std::unique_ptr<Tokenizer> makeByteTokenizer();

// Parses tokenizer.json (model.type "BPE" with byte-level pre-tokenizer,
// merges, added_tokens). Throws TokenizerError naming the file on
// unsupported or broken input.
std::unique_ptr<Tokenizer> loadTokenizerJson(const std::filesystem::path& tokenizerJson);

// tokenizer.json in the folder if present, the byte tokenizer otherwise.
std::unique_ptr<Tokenizer> loadTokenizerForModel(const std::filesystem::path& modelDir);

}  // namespace plab
