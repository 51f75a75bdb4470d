#pragma once
// What makes a folder of weights a complete Hugging Face model folder besides
// config.json and model.safetensors: the tokenizer files the run used and
// the source's generation_config.json. A run reads them once, when it loads
// its model, and writes them into every checkpoint-N/, so that
// AutoTokenizer.from_pretrained(checkpoint) encodes as the run did, even if
// the source folder changes later.
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace plab {

struct ResolvedModelSource;

struct HfModelFiles {
  std::vector<std::pair<std::string, std::string>> files;  // file name -> bytes
};

// Files larger than this are refused (the largest tokenizer.json files, of
// 256k-token vocabularies, are under 40 MB).
inline constexpr std::uintmax_t kMaxHfFileBytes = std::uintmax_t(256) << 20;

// The files of a run's tokenizer. From the source folder, when the run uses
// its tokenizer: those of util/hf_file_names.h it has (tokenizer.json,
// tokenizer_config.json, special_tokens_map.json, vocab.json + merges.txt,
// generation_config.json, ...). For the byte tokenizer: a tokenizer.json and tokenizer_config.json
// that transformers reads as the same tokenizer (ids 0-255 the bytes, 256
// <|endoftext|>, the EOS). Throws ConfigError naming a file that cannot be
// read or is larger than kMaxHfFileBytes.
HfModelFiles collectHfModelFiles(const ResolvedModelSource& source);

// The byte tokenizer's tokenizer.json (bytesTokenizerJson) and its
// tokenizer_config.json.
std::string bytesTokenizerJson();
std::string bytesTokenizerConfigJson();

// Writes the files into dir (created if needed), each replaced whole.
// Throws IoError.
void writeHfModelFiles(const std::filesystem::path& dir, const HfModelFiles& files);

}  // namespace plab
