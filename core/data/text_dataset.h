#pragma once
// Training data: plain text or JSONL (one object per line, a text field)
// tokenized into fixed-length blocks, split train/validation with a seed.
// A .jsonl file holds one document per line; any other file is one
// document (see data/document_reader.h). The text is streamed and tokenized
// in pieces (data/document_encoder.h) into a compact token store
// (data/token_store.h: 2 or 4 bytes per token, memory-mapped from a file in
// tokenFolder when one is given); only a batch is ever int64.
#include <torch/torch.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "data/data_config.h"
#include "data/token_store.h"
#include "tokenizer/tokenizer.h"

namespace plab {

class TextDataset {
 public:
  // Reads config.path (or the embedded default corpus when empty), tokenizes
  // documents (eos between them), cuts blocks of seq_len + 1 tokens
  // (non-overlapping; the tail that does not fill a block is dropped),
  // shuffles blocks with config.seed and holds back val_fraction (at least
  // one block). The tokens go to an unlinked file in tokenFolder (a run
  // folder), memory-mapped, or to memory when tokenFolder is empty or cannot
  // take the file. Throws DataError if the file is unreadable, a JSONL line
  // is not valid JSON / lacks the field, or there are fewer than 2 blocks.
  TextDataset(const DataConfig& config, const Tokenizer& tokenizer, int64_t seq_len,
              const std::filesystem::path& tokenFolder = {});

  int64_t numTrainBlocks() const;
  int64_t numValBlocks() const;
  int64_t numTokens() const;
  int64_t seqLen() const;
  int bytesPerToken() const { return tokens_->bytesPerToken(); }
  bool tokensMapped() const { return tokens_->mapped(); }  // from a file, not in memory

  // Random train batch: {inputs, targets}, both [batch, seq_len] int64 CPU.
  std::pair<torch::Tensor, torch::Tensor> trainBatch(int64_t batch, std::mt19937_64& rng) const;
  // The validation set cut into batches (deterministic order, at most
  // maxBatches; maxBatches <= 0 means all). The last batch may be smaller.
  std::vector<std::pair<torch::Tensor, torch::Tensor>> valBatches(int64_t batch, int64_t maxBatches) const;

 private:
  // Blocks starting at the given token offsets as {inputs, targets}.
  std::pair<torch::Tensor, torch::Tensor> gather(const std::vector<int64_t>& starts) const;

  std::unique_ptr<TokenStore> tokens_;
  std::vector<int64_t> trainStarts_;  // token offset of each train block
  std::vector<int64_t> valStarts_;
  int64_t seqLen_ = 0;
};

}  // namespace plab
