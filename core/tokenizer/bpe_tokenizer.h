#pragma once
// BPE from a Hugging Face tokenizer.json, in its two flavours:
// - byte-level (GPT-2 / Llama-3 / Qwen2): each piece is mapped byte ->
//   unicode character and merged from single bytes;
// - SentencePiece style (Llama-2, TinyLlama, Mistral): vocab entries are
//   plain UTF-8 with "▁" for spaces, pieces start as single characters,
//   characters outside the vocab become <0xXX> byte tokens (byte_fallback)
//   or the unknown token.
// Added tokens are cut out of the text first (matched literally, longest
// first); each piece between them is normalised, pre-tokenized (split rules
// or Metaspace) and merged by rank; SentencePiece-style pieces are merged
// word by word where the merges cannot join across (merge_boundaries.h).
// Built by loadTokenizerJson.
#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tokenizer/bpe_merge.h"
#include "tokenizer/merge_boundaries.h"
#include "tokenizer/metaspace.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/pre_tokenizer_steps.h"
#include "tokenizer/tokenizer.h"

namespace plab {

struct BpeSpec {
  std::unordered_map<std::string, int64_t> vocab;           // spelling -> id
  std::vector<std::pair<std::string, std::string>> merges;  // in rank order; a repeated pair keeps its last rank
  std::vector<std::pair<std::string, int64_t>> addedTokens; // literal content -> id
  bool byteLevel = true;               // vocab spelled with GPT-2's byte -> character map
  std::vector<PreTokenizerStep> preTokenizer;  // byte-level: applied in order; may be empty
  std::optional<Metaspace> metaspace;  // SentencePiece pre-tokenizer
  bool byteFallback = false;           // SentencePiece: <0xXX> tokens for unknown characters
  std::optional<std::string> unkToken;
  bool fuseUnk = false;
  bool ignoreMerges = false;           // a piece that is a whole vocab entry skips merging
  Normalizer normalizer;
  std::vector<int64_t> prefixIds, suffixIds;  // post-processor template around one sequence
  std::string source;                         // file name for error messages
};

class BpeTokenizer : public Tokenizer {
 public:
  explicit BpeTokenizer(BpeSpec spec);  // throws TokenizerError

  std::vector<int64_t> encode(const std::string& utf8) const override;
  std::vector<int64_t> specialIdsBefore() const override { return prefixIds_; }
  std::vector<int64_t> specialIdsAfter() const override { return suffixIds_; }
  // Before a U+0020 space that follows a non-space character, when the
  // pre-tokenizer always ends a piece there (the GPT-2 / Llama-3 / Qwen2
  // scanners, or Metaspace with split; not a Split run by the regex
  // engine), the normalizer only maps characters
  // (NFC/NFD/NFKC/NFKD/Lowercase) and no added token runs across the cut.
  // Otherwise 0: such a text is encoded whole.
  std::size_t lastSafeCut(std::string_view text) const override;
  std::string decode(const std::vector<int64_t>& ids) const override;
  int64_t vocabSize() const override { return static_cast<int64_t>(decoded_.size()); }
  std::optional<int64_t> eosId() const override { return eos_; }
  std::string eosOrigin() const override { return eosOrigin_; }
  bool eosIsTokenizers() const override { return eos_ && eosIsTokenizers_; }
  std::string kind() const override { return byteLevel_ ? "byte-level-bpe" : "sentencepiece-bpe"; }

  // Id of an added token or vocab entry spelled `content`, if any.
  std::optional<int64_t> tokenId(const std::string& content) const;
  // Id of an added token (special or not) spelled `content`, if any.
  std::optional<int64_t> addedTokenId(const std::string& content) const;
  bool hasToken(int64_t id) const { return id >= 0 && id < vocabSize() && present_[id]; }
  void setEos(std::optional<int64_t> id, std::string origin, bool tokenizers) {
    eos_ = id;
    eosOrigin_ = std::move(origin);
    eosIsTokenizers_ = tokenizers;
  }
  // Registers `content` as a special added token, as transformers registers
  // the special tokens a folder names (the tokenizers library's
  // AddedVocabulary): an added token or vocabulary entry spelled exactly so
  // keeps its id and is from then on matched in the text; otherwise it gets
  // the next id (the vocabulary's size, or one past the largest added id
  // when that is larger). Returns the id; empty content is ignored (-1).
  int64_t addSpecialToken(const std::string& content);

 private:
  void encodeSegment(const std::string& text, bool atInputStart, std::vector<int64_t>& out) const;
  void encodePiece(const std::string& piece, std::vector<int64_t>& out) const;
  void encodeWord(const std::string& word, std::vector<int64_t>& out) const;
  void initialSymbols(const std::string& piece, std::vector<int64_t>& symbols) const;
  void buildDecodeTable(const BpeSpec& spec);
  void registerAdded(const std::string& content, int64_t id);
  bool addedTokenAcross(std::string_view text, std::size_t cut) const;

  std::unordered_map<std::string, int64_t> vocab_;
  BpeMergeTable merges_;
  MergeBoundaries wordCuts_;                    // SentencePiece style: where a piece splits into words
  std::vector<std::string> decoded_;            // id -> raw bytes
  std::vector<bool> present_;                   // id has a token
  std::array<int64_t, 256> byteIds_{};          // byte -> token (byte-level), <0xXX> (byte fallback) or -1
  // Added tokens bucketed by first byte, longest first.
  std::array<std::vector<std::pair<std::string, int64_t>>, 256> addedByFirstByte_;
  std::unordered_map<std::string, int64_t> added_;
  bool byteLevel_;
  std::vector<PreTokenizerStep> preTokenizer_;
  std::optional<Metaspace> metaspace_;
  bool byteFallback_;
  std::optional<int64_t> unk_;
  bool fuseUnk_;
  bool ignoreMerges_;
  bool decodeDropsLeadingSpace_ = false;  // SentencePiece: the prepended "▁" is not text
  Normalizer normalizer_;
  std::vector<int64_t> prefixIds_, suffixIds_;
  std::optional<int64_t> eos_;
  std::string eosOrigin_;
  bool eosIsTokenizers_ = false;
  bool cutsBeforeSpaces_ = false;   // see lastSafeCut
  std::size_t maxAddedBytes_ = 0;   // longest added token

  mutable std::mutex cacheMutex_;
  mutable std::unordered_map<std::string, std::vector<int64_t>> cache_;
};

}  // namespace plab
