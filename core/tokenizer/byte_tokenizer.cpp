#include <string>

#include "tokenizer/tokenizer.h"
#include "util/errors.h"

namespace plab {

namespace {

constexpr int64_t kEndOfText = 256;
const char* const kEndOfTextText = "<|endoftext|>";

// One id per byte; any byte sequence (valid UTF-8 or not) round-trips.
class ByteTokenizer : public Tokenizer {
 public:
  std::vector<int64_t> encode(const std::string& utf8) const override {
    std::vector<int64_t> ids;
    ids.reserve(utf8.size());
    for (unsigned char b : utf8) ids.push_back(b);
    return ids;
  }
  std::string decode(const std::vector<int64_t>& ids) const override {
    std::string out;
    out.reserve(ids.size());
    for (int64_t id : ids) {
      if (id >= 0 && id < 256)
        out += static_cast<char>(static_cast<unsigned char>(id));
      else if (id == kEndOfText)
        out += kEndOfTextText;
      else
        throw TokenizerError("byte tokenizer: token id " + std::to_string(id) + " is not in 0..256");
    }
    return out;
  }
  // Every position: one id per byte.
  std::size_t lastSafeCut(std::string_view text) const override { return text.size(); }
  int64_t vocabSize() const override { return 257; }
  std::optional<int64_t> eosId() const override { return kEndOfText; }
  std::string eosOrigin() const override { return "the byte tokenizer's <|endoftext|>"; }
  std::string kind() const override { return "bytes"; }
};

}  // namespace

std::unique_ptr<Tokenizer> makeByteTokenizer() { return std::make_unique<ByteTokenizer>(); }

}  // namespace plab
