#include "data/text_dataset.h"

#include <algorithm>
#include <cmath>

#include "data/document_reader.h"
#include "util/errors.h"

namespace plab {

namespace {

std::string sourceName(const DataConfig& config) {
  return config.path.empty() ? std::string("the default corpus") : config.path;
}

// Fisher-Yates with a plain modulo: unlike std::shuffle /
// uniform_int_distribution, the result is the same with every standard
// library, so a seed names one split everywhere.
std::vector<int64_t> shuffledOrder(int64_t n, uint64_t seed) {
  std::vector<int64_t> order(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  std::mt19937_64 rng(seed);
  for (int64_t i = n - 1; i > 0; --i) std::swap(order[i], order[rng() % static_cast<uint64_t>(i + 1)]);
  return order;
}

torch::Tensor rowsOf(const torch::Tensor& blocks, const std::vector<int64_t>& rows) {
  auto index = torch::tensor(rows, torch::kLong);
  return blocks.index_select(0, index).contiguous();
}

}  // namespace

TextDataset::TextDataset(const DataConfig& config, const Tokenizer& tokenizer, int64_t seq_len)
    : seqLen_(seq_len) {
  if (seq_len < 1) throw DataError("sequence length must be at least 1, got " + std::to_string(seq_len));
  if (!(config.val_fraction >= 0.0 && config.val_fraction < 1.0))
    throw DataError("val_fraction must be in [0, 1), got " + std::to_string(config.val_fraction));

  std::vector<int64_t> tokens;
  const auto eos = tokenizer.eosId();
  const auto docs = readDocuments(config);
  for (std::size_t d = 0; d < docs.size(); ++d) {
    // Documents are separated by EOS (unless the template already ends them
    // with it); each gets the tokenizer's special tokens (BOS) like HF's
    // add_special_tokens=True.
    if (d > 0 && eos && (tokens.empty() || tokens.back() != *eos)) tokens.push_back(*eos);
    const auto ids = tokenizer.encodeWithSpecialTokens(docs[d]);
    tokens.insert(tokens.end(), ids.begin(), ids.end());
  }
  numTokens_ = static_cast<int64_t>(tokens.size());

  // Non-overlapping blocks of seq_len + 1 tokens (inputs plus the shifted
  // target); the tail that does not fill a block is dropped.
  const int64_t blockLen = seq_len + 1;
  const int64_t numBlocks = numTokens_ / blockLen;
  if (numBlocks < 2)
    throw DataError(sourceName(config) + " has " + std::to_string(numTokens_) + " tokens; at least " +
                    std::to_string(2 * blockLen) + " are needed for two blocks of seq_len + 1 = " +
                    std::to_string(blockLen));
  auto blocks = torch::from_blob(tokens.data(), {numBlocks, blockLen}, torch::kLong).clone();

  int64_t numVal = static_cast<int64_t>(std::llround(config.val_fraction * static_cast<double>(numBlocks)));
  numVal = std::clamp<int64_t>(numVal, 1, numBlocks - 1);
  const auto order = shuffledOrder(numBlocks, config.seed);
  val_ = rowsOf(blocks, std::vector<int64_t>(order.begin(), order.begin() + numVal));
  train_ = rowsOf(blocks, std::vector<int64_t>(order.begin() + numVal, order.end()));
}

int64_t TextDataset::numTrainBlocks() const { return train_.size(0); }
int64_t TextDataset::numValBlocks() const { return val_.size(0); }
int64_t TextDataset::numTokens() const { return numTokens_; }
int64_t TextDataset::seqLen() const { return seqLen_; }

std::pair<torch::Tensor, torch::Tensor> TextDataset::trainBatch(int64_t batch, std::mt19937_64& rng) const {
  if (batch < 1) throw DataError("batch size must be at least 1, got " + std::to_string(batch));
  std::vector<int64_t> rows(static_cast<std::size_t>(batch));
  for (auto& r : rows) r = static_cast<int64_t>(rng() % static_cast<uint64_t>(numTrainBlocks()));
  const auto picked = rowsOf(train_, rows);
  return {picked.narrow(1, 0, seqLen_).contiguous(), picked.narrow(1, 1, seqLen_).contiguous()};
}

std::vector<std::pair<torch::Tensor, torch::Tensor>> TextDataset::valBatches(int64_t batch,
                                                                          int64_t maxBatches) const {
  if (batch < 1) throw DataError("batch size must be at least 1, got " + std::to_string(batch));
  std::vector<std::pair<torch::Tensor, torch::Tensor>> out;
  for (int64_t start = 0; start < numValBlocks(); start += batch) {
    if (maxBatches > 0 && static_cast<int64_t>(out.size()) >= maxBatches) break;
    const auto rows = val_.narrow(0, start, std::min(batch, numValBlocks() - start));
    out.emplace_back(rows.narrow(1, 0, seqLen_).contiguous(), rows.narrow(1, 1, seqLen_).contiguous());
  }
  return out;
}

}  // namespace plab
