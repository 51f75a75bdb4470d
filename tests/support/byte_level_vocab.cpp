#include "support/byte_level_vocab.h"

#include <cstdint>

#include "tokenizer/byte_level.h"

namespace plab::test {

nlohmann::json byteLevelVocab(const std::vector<std::pair<std::string, std::string>>& merges) {
  nlohmann::json vocab = nlohmann::json::object();
  for (int b = 0; b < 256; ++b) vocab[byte_level::encodeBytes(std::string(1, static_cast<char>(b)))] = b;
  int64_t next = 256;
  for (const auto& [a, b] : merges) {
    const std::string merged = byte_level::encodeBytes(a + b);
    if (!vocab.contains(merged)) vocab[merged] = next++;
  }
  return vocab;
}

std::string byteLevelMerge(const std::string& a, const std::string& b) {
  return byte_level::encodeBytes(a) + " " + byte_level::encodeBytes(b);
}

}  // namespace plab::test
