#include "tokenizer/bpe_tokenizer.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <limits>

#include "tokenizer/byte_level.h"
#include "tokenizer/unicode_tables.h"
#include "util/errors.h"
#include "util/json_limits.h"

namespace plab {

namespace {
constexpr std::size_t kMaxCacheEntries = 200000;
// Longer pieces are not cached (as Hugging Face): they are rare and would
// fill the cache with text that never repeats.
constexpr std::size_t kMaxCachedPieceBytes = 256;
const char* const kSpaceMarker = "\xE2\x96\x81";  // "▁"

// SentencePiece's name for a raw byte: "<0x0A>".
std::string byteTokenName(unsigned char b) {
  char name[8];
  std::snprintf(name, sizeof name, "<0x%02X>", b);
  return name;
}

std::string replaceSpaceMarkers(const std::string& token) {
  std::string out;
  for (std::size_t pos = 0; pos < token.size();) {
    if (token.compare(pos, 3, kSpaceMarker) == 0) {
      out += ' ';
      pos += 3;
    } else {
      out += token[pos++];
    }
  }
  return out;
}
}  // namespace

BpeTokenizer::BpeTokenizer(BpeSpec spec)
    : vocab_(std::move(spec.vocab)),
      byteLevel_(spec.byteLevel),
      preTokenizer_(std::move(spec.preTokenizer)),
      metaspace_(spec.metaspace),
      byteFallback_(spec.byteFallback),
      fuseUnk_(spec.fuseUnk),
      ignoreMerges_(spec.ignoreMerges),
      normalizer_(spec.normalizer),
      prefixIds_(spec.prefixIds),
      suffixIds_(spec.suffixIds) {
  const std::string& src = spec.source;
  buildDecodeTable(spec);

  byteIds_.fill(-1);
  if (byteLevel_) {
    // Byte-level BPE needs a token for every single byte.
    const auto& spelling = byte_level::byteToUnicode();
    for (int b = 0; b < 256; ++b) {
      auto it = vocab_.find(spelling[b]);
      if (it == vocab_.end())
        throw TokenizerError(src + ": not a byte-level vocabulary (no token for byte " + std::to_string(b) + ")");
      byteIds_[b] = it->second;
    }
  } else if (byteFallback_) {
    for (int b = 0; b < 256; ++b)
      if (auto it = vocab_.find(byteTokenName(static_cast<unsigned char>(b))); it != vocab_.end())
        byteIds_[b] = it->second;
  }
  if (spec.unkToken)
    if (auto it = vocab_.find(*spec.unkToken); it != vocab_.end()) unk_ = it->second;

  cutsBeforeSpaces_ = normalizer_.onlyMapsCharacters() &&
                      (metaspace_ ? metaspace_->split && !metaspace_->replacement.empty() : cutsBeforeSpaces(preTokenizer_));

  if (!byteLevel_) wordCuts_ = MergeBoundaries(vocab_, spec.merges);
  int rank = 0;
  for (const auto& [left, right] : spec.merges) {
    auto l = vocab_.find(left), r = vocab_.find(right), m = vocab_.find(left + right);
    if (l == vocab_.end() || r == vocab_.end() || m == vocab_.end())
      throw TokenizerError(src + ": merge '" + left + " " + right + "' uses tokens missing from the vocab");
    // A pair listed twice keeps its last rank, as the Hugging Face library
    // (it fills a hash map in file order).
    merges_[bpePairKey(l->second, r->second)] = BpeMerge{rank++, m->second};
  }
}

void BpeTokenizer::buildDecodeTable(const BpeSpec& spec) {
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
    if (byteLevel_) {
      decoded_[id] = byte_level::decodeToBytes(token);
    } else if (spec.byteFallback && token.size() == 6 && token.compare(0, 3, "<0x") == 0 && token[5] == '>' &&
               std::isxdigit(static_cast<unsigned char>(token[3])) && std::isxdigit(static_cast<unsigned char>(token[4]))) {
      decoded_[id] = std::string(1, static_cast<char>(std::stoi(token.substr(3, 2), nullptr, 16)));
    } else {
      decoded_[id] = replaceSpaceMarkers(token);
    }
    present_[id] = true;
  }
  for (const auto& [content, id] : spec.addedTokens) registerAdded(content, id);
  decodeDropsLeadingSpace_ =
      !byteLevel_ && (spec.normalizer.prepends() ||
                      (spec.metaspace && spec.metaspace->prepend != Metaspace::Prepend::Never));
}

void BpeTokenizer::registerAdded(const std::string& content, int64_t id) {
  if (static_cast<std::size_t>(id) >= decoded_.size()) {
    decoded_.resize(static_cast<std::size_t>(id) + 1);
    present_.resize(decoded_.size(), false);
  }
  decoded_[id] = content;
  present_[id] = true;
  added_[content] = id;
  maxAddedBytes_ = std::max(maxAddedBytes_, content.size());
  auto& bucket = addedByFirstByte_[static_cast<unsigned char>(content[0])];
  bucket.emplace_back(content, id);
  std::stable_sort(bucket.begin(), bucket.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
}

int64_t BpeTokenizer::addSpecialToken(const std::string& content) {
  if (content.empty()) return -1;
  if (auto it = added_.find(content); it != added_.end()) return it->second;
  int64_t id = 0;
  if (auto it = vocab_.find(content); it != vocab_.end()) {
    id = it->second;  // looked up as spelled, not byte-level encoded, as the library does
  } else {
    id = static_cast<int64_t>(vocab_.size());
    for (const auto& [text, addedId] : added_)
      if (addedId >= id) id = addedId + 1;
  }
  registerAdded(content, id);
  return id;
}

std::optional<int64_t> BpeTokenizer::tokenId(const std::string& content) const {
  if (auto it = added_.find(content); it != added_.end()) return it->second;
  const std::string spelled = byteLevel_ ? byte_level::encodeBytes(content) : content;
  if (auto it = vocab_.find(spelled); it != vocab_.end()) return it->second;
  return std::nullopt;
}

std::optional<int64_t> BpeTokenizer::addedTokenId(const std::string& content) const {
  if (auto it = added_.find(content); it != added_.end()) return it->second;
  return std::nullopt;
}

std::size_t BpeTokenizer::lastSafeCut(std::string_view text) const {
  if (!cutsBeforeSpaces_) return 0;
  // The added-token check looks at up to maxAddedBytes_ - 1 bytes past a cut.
  const std::size_t lookahead = std::max<std::size_t>(1, maxAddedBytes_);
  for (std::size_t end = text.size();;) {
    const std::size_t cut = lastSpaceAfterNonSpace(text.substr(0, end), lookahead);
    if (cut == 0 || !addedTokenAcross(text, cut)) return cut;
    end = cut + lookahead - 1;  // the next candidate lies before this one
  }
}

// True when an added token's spelling occurs in `text` starting before `cut`
// and ending after it (encode would see it whole; the two pieces would not).
bool BpeTokenizer::addedTokenAcross(std::string_view text, std::size_t cut) const {
  const std::size_t from = cut >= maxAddedBytes_ ? cut - maxAddedBytes_ + 1 : 0;
  for (std::size_t q = from; q < cut; ++q)
    for (const auto& [content, id] : addedByFirstByte_[static_cast<unsigned char>(text[q])])
      if (q + content.size() > cut && text.substr(q, content.size()) == content) return true;
  return false;
}

std::vector<int64_t> BpeTokenizer::encode(const std::string& text) const {
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
    encodeSegment(text.substr(segmentStart, pos - segmentStart), segmentStart == 0, out);
    out.push_back(hit->second);
    pos += hit->first.size();
    segmentStart = pos;
  }
  encodeSegment(text.substr(segmentStart), segmentStart == 0, out);
  return out;
}

void BpeTokenizer::encodeSegment(const std::string& raw, bool atInputStart, std::vector<int64_t>& out) const {
  if (raw.empty()) return;
  const std::string segment = normalizer_.empty() ? raw : normalizer_.apply(raw);
  if (segment.empty()) return;
  if (metaspace_) {
    for (const auto& piece : metaspace_->apply(segment, atInputStart)) encodePiece(piece, out);
    return;
  }
  preTokenizeSteps(segment, preTokenizer_, [&](std::string_view piece) { encodePiece(std::string(piece), out); });
}

// Single bytes (byte-level) or single characters, with byte fallback or the
// unknown token for characters outside the vocab (SentencePiece style).
void BpeTokenizer::initialSymbols(const std::string& piece, std::vector<int64_t>& symbols) const {
  symbols.reserve(piece.size());
  if (byteLevel_) {
    for (unsigned char b : piece) symbols.push_back(byteIds_[b]);
    return;
  }
  bool pendingUnk = false;
  auto flushUnk = [&] {
    if (pendingUnk) symbols.push_back(*unk_);
    pendingUnk = false;
  };
  for (std::size_t pos = 0; pos < piece.size();) {
    std::size_t len = 0;
    unicode::decodeUtf8(piece.data(), piece.size(), pos, len);
    const std::string character = piece.substr(pos, len);
    pos += len;
    if (auto it = vocab_.find(character); it != vocab_.end()) {
      flushUnk();
      symbols.push_back(it->second);
      continue;
    }
    if (byteFallback_ && std::all_of(character.begin(), character.end(),
                                     [&](char b) { return byteIds_[static_cast<unsigned char>(b)] >= 0; })) {
      flushUnk();
      for (unsigned char b : character) symbols.push_back(byteIds_[b]);
      continue;
    }
    if (!unk_) continue;  // without an unknown token the character is dropped, as Hugging Face does
    if (pendingUnk && !fuseUnk_) symbols.push_back(*unk_);
    pendingUnk = true;
  }
  flushUnk();
}

void BpeTokenizer::encodePiece(const std::string& piece, std::vector<int64_t>& out) const {
  // ignore_merges looks at the whole piece; the merges then run word by word.
  if (ignoreMerges_) {
    if (auto it = vocab_.find(byteLevel_ ? byte_level::encodeBytes(piece) : piece); it != vocab_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  // A short piece is cached whole; a long one (a whole document without a
  // pre-tokenizer) is cut where no merge can join across.
  if (byteLevel_ || piece.size() < kMaxCachedPieceBytes) {
    encodeWord(piece, out);
    return;
  }
  for (std::string_view word : wordCuts_.split(piece)) encodeWord(std::string(word), out);
}

void BpeTokenizer::encodeWord(const std::string& word, std::vector<int64_t>& out) const {
  const bool cacheable = word.size() < kMaxCachedPieceBytes;
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cacheMutex_);
    if (auto it = cache_.find(word); it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<int64_t> symbols;
  initialSymbols(word, symbols);
  applyBpeMerges(symbols, merges_);
  out.insert(out.end(), symbols.begin(), symbols.end());
  if (!cacheable) return;
  std::lock_guard<std::mutex> lock(cacheMutex_);
  if (cache_.size() >= kMaxCacheEntries) cache_.clear();
  cache_.emplace(word, std::move(symbols));
}

std::string BpeTokenizer::decode(const std::vector<int64_t>& ids) const {
  std::string out;
  for (int64_t id : ids) {
    if (id < 0 || id >= vocabSize() || !present_[id])
      throw TokenizerError("token id " + std::to_string(id) + " is not in the vocabulary (size " +
                           std::to_string(vocabSize()) + ")");
    out += decoded_[id];
  }
  if (decodeDropsLeadingSpace_ && !out.empty() && out[0] == ' ') out.erase(0, 1);
  return out;
}

}  // namespace plab
