#pragma once
// Byte-level BPE (GPT-2 / Llama-3 / Qwen2): added tokens are cut out of the
// text first (matched literally, longest first), the rest is split by the
// pre-tokenizer rules, each piece is mapped byte -> unicode character and
// merged by rank. Built by loadTokenizerJson (tokenizer_json.cpp).
#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tokenizer/pretokenizer.h"
#include "tokenizer/tokenizer.h"

namespace plab {

struct BpeSpec {
  std::unordered_map<std::string, int64_t> vocab;        // byte-level spelling -> id
  std::vector<std::pair<std::string, std::string>> merges;  // in rank order
  std::vector<std::pair<std::string, int64_t>> addedTokens; // literal content -> id
  std::vector<SplitRule> splitRules;                     // applied in order; may be empty
  bool addPrefixSpace = false;
  bool ignoreMerges = false;  // a piece that is a whole vocab entry skips merging
  std::string source;         // file name for error messages
};

class ByteLevelBpeTokenizer : public Tokenizer {
 public:
  explicit ByteLevelBpeTokenizer(BpeSpec spec);  // throws TokenizerError

  std::vector<int64_t> encode(const std::string& utf8) const override;
  std::string decode(const std::vector<int64_t>& ids) const override;
  int64_t vocabSize() const override { return static_cast<int64_t>(decoded_.size()); }
  std::optional<int64_t> eosId() const override { return eos_; }
  std::string kind() const override { return "byte-level-bpe"; }

  // Id of an added token or vocab entry spelled `content`, if any.
  std::optional<int64_t> tokenId(const std::string& content) const;
  void setEosId(std::optional<int64_t> id) { eos_ = id; }

 private:
  struct Merge {
    int rank;
    int64_t merged;
  };
  void encodeSegment(const std::string& text, std::vector<int64_t>& out) const;
  void encodePiece(const std::string& piece, std::vector<int64_t>& out) const;

  std::unordered_map<std::string, int64_t> vocab_;
  std::unordered_map<uint64_t, Merge> merges_;  // (left id << 32 | right id)
  std::vector<std::string> decoded_;            // id -> raw bytes
  std::vector<bool> present_;                   // id has a token
  std::array<int64_t, 256> byteIds_{};
  // Added tokens bucketed by first byte, longest first.
  std::array<std::vector<std::pair<std::string, int64_t>>, 256> addedByFirstByte_;
  std::unordered_map<std::string, int64_t> added_;
  std::vector<SplitRule> splitRules_;
  bool addPrefixSpace_ = false;
  bool ignoreMerges_ = false;
  std::optional<int64_t> eos_;

  mutable std::mutex cacheMutex_;
  mutable std::unordered_map<std::string, std::vector<int64_t>> cache_;
};

}  // namespace plab
