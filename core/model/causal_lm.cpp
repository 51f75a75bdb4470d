#include "model/causal_lm.h"

namespace plab {

torch::Tensor CausalLM::loss(const torch::Tensor& input_ids, const torch::Tensor& targets) {
  const torch::Tensor logits = forward(input_ids).to(torch::kFloat32);
  const int64_t vocab = logits.size(-1);
  return torch::nn::functional::cross_entropy(logits.reshape({-1, vocab}), targets.reshape({-1}));
}

}  // namespace plab
