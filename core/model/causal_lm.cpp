#include "model/causal_lm.h"

namespace plab {

torch::Tensor CausalLM::loss(const torch::Tensor& input_ids, const torch::Tensor& targets) {
  const torch::Tensor logits = forward(input_ids).to(torch::kFloat32);
  const int64_t vocab = logits.size(-1);
  return torch::nn::functional::cross_entropy(logits.reshape({-1, vocab}), targets.reshape({-1}));
}

ModuleNode describeModules(const CausalLM& model) {
  ModuleNode root = describeModules(static_cast<const torch::nn::Module&>(model));
  if (const std::string owner = model.tiedHeadOwner(); !owner.empty()) addTiedHead(root, owner);
  return root;
}

}  // namespace plab
