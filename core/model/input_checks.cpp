#include "model/input_checks.h"

#include "util/errors.h"

namespace plab {

void checkInputIds(const torch::Tensor& input_ids, const ModelConfig& config) {
  if (input_ids.dim() != 2 || input_ids.scalar_type() != torch::kInt64)
    throw ModelError("input_ids must be a [batch, time] int64 tensor, got " + std::to_string(input_ids.dim()) +
                     "-d " + std::string(c10::toString(input_ids.scalar_type())));
  if (input_ids.size(1) > config.max_position_embeddings)
    throw ModelError("sequence length " + std::to_string(input_ids.size(1)) + " exceeds max_position_embeddings " +
                     std::to_string(config.max_position_embeddings));
  if (input_ids.numel() == 0) return;
  const auto range = torch::aminmax(input_ids);
  const int64_t lo = std::get<0>(range).item<int64_t>(), hi = std::get<1>(range).item<int64_t>();
  if (lo < 0 || hi >= config.vocab_size)
    throw ModelError("token id " + std::to_string(lo < 0 ? lo : hi) + " is outside the vocabulary of " +
                     std::to_string(config.vocab_size));
}

}  // namespace plab
