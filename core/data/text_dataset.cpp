#include "data/text_dataset.h"

#include <algorithm>
#include <cmath>

#include "data/document_encoder.h"
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

}  // namespace

TextDataset::TextDataset(const DataConfig& config, const Tokenizer& tokenizer, int64_t seq_len,
                         const std::filesystem::path& tokenFolder)
    : seqLen_(seq_len) {
  if (seq_len < 1) throw DataError("sequence length must be at least 1, got " + std::to_string(seq_len));
  if (!(config.val_fraction >= 0.0 && config.val_fraction < 1.0))
    throw DataError("val_fraction must be in [0, 1), got " + std::to_string(config.val_fraction));

  tokens_ = std::make_unique<TokenStore>(tokenizer.vocabSize(), tokenFolder);
  TokenStore& tokens = *tokens_;
  const auto eos = tokenizer.eosId();
  DocumentEncoder encoder(tokenizer, [&](const std::vector<int64_t>& ids) { tokens.append(ids); });
  bool firstDocument = true;
  DocumentCallbacks callbacks;
  callbacks.begin = [&] {
    // Documents are separated by EOS (unless the template already ends them
    // with it); each gets the tokenizer's special tokens (BOS) like HF's
    // add_special_tokens=True.
    if (!firstDocument && eos && (tokens.size() == 0 || tokens.lastId() != *eos)) tokens.append({*eos});
    firstDocument = false;
    encoder.begin();
  };
  callbacks.text = [&](std::string_view text) { encoder.add(text); };
  callbacks.end = [&] { encoder.end(); };
  streamDocuments(config, callbacks);
  tokens.finish();
  const int64_t numTokens = tokens.size();

  // Non-overlapping blocks of seq_len + 1 tokens (inputs plus the shifted
  // target); the tail that does not fill a block is dropped.
  const int64_t blockLen = seq_len + 1;
  const int64_t numBlocks = numTokens / blockLen;
  if (numBlocks < 2)
    throw DataError(sourceName(config) + " has " + std::to_string(numTokens) + " tokens; at least " +
                    std::to_string(2 * blockLen) + " are needed for two blocks of seq_len + 1 = " +
                    std::to_string(blockLen));

  int64_t numVal = static_cast<int64_t>(std::llround(config.val_fraction * static_cast<double>(numBlocks)));
  numVal = std::clamp<int64_t>(numVal, 1, numBlocks - 1);
  const auto order = shuffledOrder(numBlocks, config.seed);
  for (int64_t i = 0; i < numBlocks; ++i)
    (i < numVal ? valStarts_ : trainStarts_).push_back(order[static_cast<std::size_t>(i)] * blockLen);
}

int64_t TextDataset::numTrainBlocks() const { return static_cast<int64_t>(trainStarts_.size()); }
int64_t TextDataset::numValBlocks() const { return static_cast<int64_t>(valStarts_.size()); }
int64_t TextDataset::numTokens() const { return tokens_->size(); }
int64_t TextDataset::seqLen() const { return seqLen_; }

std::pair<torch::Tensor, torch::Tensor> TextDataset::gather(const std::vector<int64_t>& starts) const {
  const int64_t blockLen = seqLen_ + 1;
  auto rows = torch::empty({static_cast<int64_t>(starts.size()), blockLen}, torch::kLong);
  int64_t* out = rows.data_ptr<int64_t>();
  for (std::size_t r = 0; r < starts.size(); ++r) tokens_->read(starts[r], blockLen, out + int64_t(r) * blockLen);
  return {rows.narrow(1, 0, seqLen_).contiguous(), rows.narrow(1, 1, seqLen_).contiguous()};
}

std::pair<torch::Tensor, torch::Tensor> TextDataset::trainBatch(int64_t batch, std::mt19937_64& rng) const {
  if (batch < 1) throw DataError("batch size must be at least 1, got " + std::to_string(batch));
  std::vector<int64_t> starts(static_cast<std::size_t>(batch));
  for (auto& s : starts) s = trainStarts_[rng() % static_cast<uint64_t>(numTrainBlocks())];
  return gather(starts);
}

std::vector<std::pair<torch::Tensor, torch::Tensor>> TextDataset::valBatches(int64_t batch,
                                                                          int64_t maxBatches) const {
  if (batch < 1) throw DataError("batch size must be at least 1, got " + std::to_string(batch));
  std::vector<std::pair<torch::Tensor, torch::Tensor>> out;
  for (int64_t start = 0; start < numValBlocks(); start += batch) {
    if (maxBatches > 0 && static_cast<int64_t>(out.size()) >= maxBatches) break;
    const auto first = valStarts_.begin() + start;
    out.push_back(gather(std::vector<int64_t>(first, first + std::min(batch, numValBlocks() - start))));
  }
  return out;
}

}  // namespace plab
