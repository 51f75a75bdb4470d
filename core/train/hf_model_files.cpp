#include "train/hf_model_files.h"

#include <nlohmann/json.hpp>

#include "tokenizer/byte_level.h"
#include "train/model_loading.h"
#include "util/atomic_file.h"
#include "util/errors.h"
#include "util/hf_file_names.h"
#include "util/regular_file.h"

namespace plab {
namespace fs = std::filesystem;

std::string bytesTokenizerJson() {
  // A BPE without merges over the byte-level alphabet: id b is byte b, as the
  // byte tokenizer. <|endoftext|> is an entry of the vocabulary (id 256);
  // transformers registers it as a special token because
  // tokenizer_config.json names it the EOS.
  nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
  const auto& spelling = byte_level::byteToUnicode();
  for (int b = 0; b < 256; ++b) vocab[spelling[b]] = b;
  vocab["<|endoftext|>"] = 256;
  const nlohmann::ordered_json byteLevel = {
      {"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}};
  const nlohmann::ordered_json j = {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens", nlohmann::ordered_json::array()},
      {"normalizer", nullptr},
      {"pre_tokenizer", byteLevel},
      {"post_processor", nullptr},
      {"decoder", byteLevel},
      {"model",
       {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"continuing_subword_prefix", nullptr},
        {"end_of_word_suffix", nullptr}, {"fuse_unk", false}, {"byte_fallback", false}, {"ignore_merges", false},
        {"vocab", vocab}, {"merges", nlohmann::ordered_json::array()}}}};
  return j.dump(2) + "\n";
}

std::string bytesTokenizerConfigJson() {
  const nlohmann::ordered_json j = {{"tokenizer_class", "PreTrainedTokenizerFast"},
                                    {"eos_token", "<|endoftext|>"},
                                    {"clean_up_tokenization_spaces", false}};
  return j.dump(2) + "\n";
}

HfModelFiles collectHfModelFiles(const ResolvedModelSource& source) {
  HfModelFiles out;
  // The same choice as tokenizerForSource.
  if (usesByteTokenizer(source)) {
    out.files.emplace_back("tokenizer.json", bytesTokenizerJson());
    out.files.emplace_back("tokenizer_config.json", bytesTokenizerConfigJson());
    return out;
  }
  for (const char* name : kHfModelFileNames) {
    const fs::path file = source.folder / name;
    std::error_code ec;
    if (!fs::exists(file, ec)) continue;  // a link into the Hub cache is followed, as transformers follows it
    const auto size = fs::file_size(file, ec);
    if (!ec && size > kMaxHfFileBytes)
      throw ConfigError(file.string() + ": " + std::to_string(size) + " bytes, more than a tokenizer file is (" +
                        std::to_string(kMaxHfFileBytes) + " at most) to copy into checkpoints");
    std::string problem;
    std::optional<std::string> bytes = readRegularFile(file, problem);
    if (!bytes) throw ConfigError(file.string() + ": " + problem);
    if (bytes->size() > kMaxHfFileBytes) throw ConfigError(file.string() + ": grew past " + std::to_string(kMaxHfFileBytes) + " bytes while read");
    out.files.emplace_back(name, std::move(*bytes));
  }
  return out;
}

void writeHfModelFiles(const fs::path& dir, const HfModelFiles& files) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw IoError(dir.string() + ": cannot create directory (" + ec.message() + ")");
  for (const auto& [name, bytes] : files.files) writeFileAtomically(dir / name, bytes);
}

}  // namespace plab
