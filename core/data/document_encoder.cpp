#include "data/document_encoder.h"

#include <algorithm>
#include <utility>

namespace plab {

DocumentEncoder::DocumentEncoder(const Tokenizer& tokenizer, Sink sink, std::size_t pieceBytes)
    : tokenizer_(tokenizer), sink_(std::move(sink)), pieceBytes_(std::max<std::size_t>(pieceBytes, 1)),
      nextTry_(pieceBytes_) {}

void DocumentEncoder::begin() {
  pending_.clear();
  nextTry_ = pieceBytes_;
  const std::vector<int64_t> ids = tokenizer_.specialIdsBefore();
  if (!ids.empty()) sink_(ids);
}

void DocumentEncoder::add(std::string_view text) {
  // At most pieceBytes at a time, so a piece stays under 2 * pieceBytes
  // however large `text` is (one JSONL document may be the whole file).
  while (!text.empty()) {
    const std::size_t take = std::min(text.size(), pieceBytes_);
    pending_.append(text.substr(0, take));
    text.remove_prefix(take);
    if (pending_.size() < nextTry_) continue;
    if (const std::size_t cut = tokenizer_.lastSafeCut(pending_)) {
      encodeFront(cut);
      nextTry_ = pieceBytes_;
    } else {
      nextTry_ = 2 * pending_.size();  // searched up to here: look again once the buffer has doubled
    }
  }
}

void DocumentEncoder::end() {
  if (!pending_.empty()) encodeFront(pending_.size());
  if (pending_.capacity() > 4 * pieceBytes_) std::string().swap(pending_);  // a long uncut text: give it back
  const std::vector<int64_t> ids = tokenizer_.specialIdsAfter();
  if (!ids.empty()) sink_(ids);
}

void DocumentEncoder::encodeFront(std::size_t bytes) {
  const std::vector<int64_t> ids = tokenizer_.encode(pending_.substr(0, bytes));
  pending_.erase(0, bytes);
  if (!ids.empty()) sink_(ids);
}

}  // namespace plab
