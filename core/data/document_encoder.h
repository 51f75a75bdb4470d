#pragma once
// Encodes documents that arrive in pieces of any size, so that a long text is
// never tokenized whole: the text waits in a buffer until it holds
// pieceBytes, is cut at the tokenizer's last safe cut (Tokenizer::lastSafeCut)
// and the part before the cut is encoded. The ids equal
// encodeWithSpecialTokens(whole document). A text without a safe cut (e.g.
// no spaces, or a tokenizer that knows none) keeps growing the buffer and is
// encoded whole at the end of its document.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace plab {

class DocumentEncoder {
 public:
  using Sink = std::function<void(const std::vector<int64_t>&)>;
  static constexpr std::size_t kDefaultPieceBytes = std::size_t(256) << 10;

  DocumentEncoder(const Tokenizer& tokenizer, Sink sink, std::size_t pieceBytes = kDefaultPieceBytes);

  void begin();                   // the tokenizer's special ids before a document
  void add(std::string_view text);
  void end();                     // the rest of the text, then the special ids after it

 private:
  void encodeFront(std::size_t bytes);

  const Tokenizer& tokenizer_;
  Sink sink_;
  std::size_t pieceBytes_;
  std::size_t nextTry_;  // buffer size at which to look for a cut again
  std::string pending_;
};

}  // namespace plab
