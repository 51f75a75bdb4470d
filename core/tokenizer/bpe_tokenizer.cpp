#include "tokenizer/bpe_tokenizer.h"

#include <algorithm>
#include <limits>

#include "tokenizer/byte_level.h"
#include "util/errors.h"
#include "util/json_limits.h"

namespace plab {

namespace {
constexpr std::size_t kMaxCacheEntries = 200000;

uint64_t pairKey(int64_t a, int64_t b) {
  return (static_cast<uint64_t>(a) << 32) | static_cast<uint64_t>(b);
}
}  // namespace

ByteLevelBpeTokenizer::ByteLevelBpeTokenizer(BpeSpec spec)
    : vocab_(std::move(spec.vocab)),
      splitRules_(std::move(spec.splitRules)),
      addPrefixSpace_(spec.addPrefixSpace),
      ignoreMerges_(spec.ignoreMerges) {
  const std::string& src = spec.source;
  // Ids index tables sized by the largest id: they must stay near the number
  // of tokens listed (one id of 10^8 in a 3 KB file once took 3.2 GB).
  const int64_t idLimit =
      std::min<int64_t>(std::numeric_limits<int32_t>::max(), int64_t(vocab_.size() + spec.addedTokens.size()) + 1024);
  int64_t maxId = -1;
  for (const auto& [token, id] : vocab_) {
    if (id < 0 || id >= idLimit)
      throw TokenizerError(src + ": vocab id " + std::to_string(id) + " of '" + textExcerpt(token) +
                           "' is out of range (0.." + std::to_string(idLimit - 1) + " for " +
                           std::to_string(vocab_.size()) + " tokens)");
    maxId = std::max(maxId, id);
  }
  for (const auto& [content, id] : spec.addedTokens) {
    if (id < 0 || id >= idLimit)
      throw TokenizerError(src + ": added token id " + std::to_string(id) + " is out of range (0.." +
                           std::to_string(idLimit - 1) + ")");
    if (content.empty()) throw TokenizerError(src + ": added token " + std::to_string(id) + " is empty");
    maxId = std::max(maxId, id);
  }
  decoded_.assign(static_cast<std::size_t>(maxId + 1), std::string());
  present_.assign(decoded_.size(), false);
  for (const auto& [token, id] : vocab_) {
    decoded_[id] = byte_level::decodeToBytes(token);
    present_[id] = true;
  }
  for (const auto& [content, id] : spec.addedTokens) {
    decoded_[id] = content;
    present_[id] = true;
    added_[content] = id;
    addedByFirstByte_[static_cast<unsigned char>(content[0])].emplace_back(content, id);
  }
  for (auto& bucket : addedByFirstByte_)
    std::stable_sort(bucket.begin(), bucket.end(),
                     [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });

  // Byte-level BPE needs a token for every single byte.
  const auto& spelling = byte_level::byteToUnicode();
  for (int b = 0; b < 256; ++b) {
    auto it = vocab_.find(spelling[b]);
    if (it == vocab_.end())
      throw TokenizerError(src + ": not a byte-level vocabulary (no token for byte " + std::to_string(b) + ")");
    byteIds_[b] = it->second;
  }

  int rank = 0;
  for (const auto& [left, right] : spec.merges) {
    auto l = vocab_.find(left), r = vocab_.find(right), m = vocab_.find(left + right);
    if (l == vocab_.end() || r == vocab_.end() || m == vocab_.end())
      throw TokenizerError(src + ": merge '" + left + " " + right + "' uses tokens missing from the vocab");
    // The first (lowest-rank) occurrence of a pair wins, like Hugging Face.
    merges_.emplace(pairKey(l->second, r->second), Merge{rank++, m->second});
  }
}

std::optional<int64_t> ByteLevelBpeTokenizer::tokenId(const std::string& content) const {
  if (auto it = added_.find(content); it != added_.end()) return it->second;
  if (auto it = vocab_.find(byte_level::encodeBytes(content)); it != vocab_.end()) return it->second;
  return std::nullopt;
}

std::vector<int64_t> ByteLevelBpeTokenizer::encode(const std::string& text) const {
  std::vector<int64_t> out;
  std::size_t segmentStart = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    const auto& bucket = addedByFirstByte_[static_cast<unsigned char>(text[pos])];
    const std::pair<std::string, int64_t>* hit = nullptr;
    for (const auto& candidate : bucket)
      if (text.compare(pos, candidate.first.size(), candidate.first) == 0) {
        hit = &candidate;
        break;
      }
    if (!hit) {
      ++pos;
      continue;
    }
    encodeSegment(text.substr(segmentStart, pos - segmentStart), out);
    out.push_back(hit->second);
    pos += hit->first.size();
    segmentStart = pos;
  }
  encodeSegment(text.substr(segmentStart), out);
  return out;
}

void ByteLevelBpeTokenizer::encodeSegment(const std::string& segment, std::vector<int64_t>& out) const {
  if (segment.empty()) return;
  std::vector<std::string> pieces{addPrefixSpace_ && segment[0] != ' ' ? " " + segment : segment};
  for (SplitRule rule : splitRules_) {
    std::vector<std::string> next;
    for (const auto& piece : pieces)
      for (auto& sub : preTokenize(piece, rule)) next.push_back(std::move(sub));
    pieces = std::move(next);
  }
  for (const auto& piece : pieces) encodePiece(piece, out);
}

void ByteLevelBpeTokenizer::encodePiece(const std::string& piece, std::vector<int64_t>& out) const {
  if (ignoreMerges_) {
    if (auto it = vocab_.find(byte_level::encodeBytes(piece)); it != vocab_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  {
    std::lock_guard<std::mutex> lock(cacheMutex_);
    if (auto it = cache_.find(piece); it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<int64_t> symbols;
  symbols.reserve(piece.size());
  for (unsigned char b : piece) symbols.push_back(byteIds_[b]);

  // Repeatedly merge the lowest-ranked adjacent pair (all its occurrences,
  // left to right), as GPT-2's reference implementation does.
  while (symbols.size() > 1) {
    int bestRank = std::numeric_limits<int>::max();
    const Merge* best = nullptr;
    int64_t bestLeft = 0, bestRight = 0;
    for (std::size_t i = 0; i + 1 < symbols.size(); ++i) {
      auto it = merges_.find(pairKey(symbols[i], symbols[i + 1]));
      if (it != merges_.end() && it->second.rank < bestRank) {
        bestRank = it->second.rank;
        best = &it->second;
        bestLeft = symbols[i];
        bestRight = symbols[i + 1];
      }
    }
    if (!best) break;
    std::vector<int64_t> merged;
    merged.reserve(symbols.size());
    for (std::size_t i = 0; i < symbols.size();) {
      if (i + 1 < symbols.size() && symbols[i] == bestLeft && symbols[i + 1] == bestRight) {
        merged.push_back(best->merged);
        i += 2;
      } else {
        merged.push_back(symbols[i++]);
      }
    }
    symbols = std::move(merged);
  }
  out.insert(out.end(), symbols.begin(), symbols.end());

  std::lock_guard<std::mutex> lock(cacheMutex_);
  if (cache_.size() >= kMaxCacheEntries) cache_.clear();
  cache_.emplace(piece, std::move(symbols));
}

std::string ByteLevelBpeTokenizer::decode(const std::vector<int64_t>& ids) const {
  std::string out;
  for (int64_t id : ids) {
    if (id < 0 || id >= vocabSize() || !present_[id])
      throw TokenizerError("token id " + std::to_string(id) + " is not in the vocabulary (size " +
                           std::to_string(vocabSize()) + ")");
    out += decoded_[id];
  }
  return out;
}

}  // namespace plab
