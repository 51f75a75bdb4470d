#include "model/gpt2_model.h"

#include <cmath>

#include "model/input_checks.h"
#include "model/quantized_linear.h"
#include "model/shadow_gemm.h"

namespace plab {

Gpt2AttentionImpl::Gpt2AttentionImpl(const ModelConfig& c, int64_t layerIndex)
    : torch::nn::Module("GPT2Attention"), heads(c.num_attention_heads), scale(1.0) {
  if (c.scale_attn_weights) scale /= std::sqrt(static_cast<double>(c.head_dim));
  if (c.scale_attn_by_inverse_layer_idx) scale /= static_cast<double>(layerIndex + 1);
  c_attn = register_module("c_attn", std::make_shared<Conv1DImpl>(c.hidden_size, 3 * c.hidden_size));
  c_proj = register_module("c_proj", std::make_shared<Conv1DImpl>(c.hidden_size, c.hidden_size));
}

torch::Tensor Gpt2AttentionImpl::forward(const torch::Tensor& x) {
  const int64_t B = x.size(0), T = x.size(1), H = x.size(2), D = H / heads;
  const auto qkv = c_attn->forward(x).split(H, -1);
  auto toHeads = [&](const torch::Tensor& t) { return t.reshape({B, T, heads, D}).transpose(1, 2); };
  return c_proj->forward(causalAttention(toHeads(qkv[0]), toHeads(qkv[1]), toHeads(qkv[2]), scale));
}

Gpt2MlpImpl::Gpt2MlpImpl(const ModelConfig& c) : torch::nn::Module("GPT2MLP"), activation(c.hidden_act) {
  c_fc = register_module("c_fc", std::make_shared<Conv1DImpl>(c.hidden_size, c.intermediate_size));
  c_proj = register_module("c_proj", std::make_shared<Conv1DImpl>(c.intermediate_size, c.hidden_size));
}

torch::Tensor Gpt2MlpImpl::forward(const torch::Tensor& x) {
  return c_proj->forward(applyActivation(activation, c_fc->forward(x)));
}

Gpt2BlockImpl::Gpt2BlockImpl(const ModelConfig& c, int64_t layerIndex) : torch::nn::Module("GPT2Block") {
  ln_1 = register_module("ln_1", std::make_shared<LayerNormImpl>(c.hidden_size, c.norm_eps));
  attn = register_module("attn", std::make_shared<Gpt2AttentionImpl>(c, layerIndex));
  ln_2 = register_module("ln_2", std::make_shared<LayerNormImpl>(c.hidden_size, c.norm_eps));
  mlp = register_module("mlp", std::make_shared<Gpt2MlpImpl>(c));
}

torch::Tensor Gpt2BlockImpl::forward(const torch::Tensor& residual) {
  torch::Tensor x = residual + attn->forward(ln_1->forward(residual)).to(torch::kFloat32);
  return x + mlp->forward(ln_2->forward(x)).to(torch::kFloat32);
}

Gpt2ModelImpl::Gpt2ModelImpl(const ModelConfig& c) : torch::nn::Module("GPT2Model") {
  wte = register_module("wte", std::make_shared<EmbeddingImpl>(c.vocab_size, c.hidden_size));
  wpe = register_module("wpe", std::make_shared<EmbeddingImpl>(c.max_position_embeddings, c.hidden_size));
  h = register_module("h", torch::nn::ModuleList());
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) h->push_back(std::make_shared<Gpt2BlockImpl>(c, i));
  ln_f = register_module("ln_f", std::make_shared<LayerNormImpl>(c.hidden_size, c.norm_eps));
}

torch::Tensor Gpt2ModelImpl::forward(const torch::Tensor& input_ids) {
  const torch::Tensor positions =
      torch::arange(input_ids.size(1), torch::TensorOptions().dtype(torch::kInt64).device(input_ids.device()));
  torch::Tensor x = wte->forward(input_ids).to(torch::kFloat32) + wpe->forward(positions).to(torch::kFloat32);
  for (const auto& block : *h) x = block->as<Gpt2BlockImpl>()->forward(x);
  return ln_f->forward(x);
}

Gpt2LMHeadModel::Gpt2LMHeadModel(const ModelConfig& c) : CausalLM(c, "GPT2LMHeadModel") {
  transformer = register_module("transformer", std::make_shared<Gpt2ModelImpl>(c));
  if (!c.tie_word_embeddings)
    lm_head = register_module("lm_head", std::make_shared<LinearImpl>(c.hidden_size, c.vocab_size, false));
}

torch::Tensor Gpt2LMHeadModel::forward(const torch::Tensor& input_ids) {
  checkInputIds(input_ids, config());
  const torch::Tensor hidden = transformer->forward(input_ids);
  if (lm_head) return lm_head->forward(hidden).to(torch::kFloat32);
  // The tied head computes in the embedding's dtype.
  recordShadowGemm(hidden, transformer->wte->weight, headGemm);
  return linearInGemmFormat(hidden, transformer->wte->weight, {}, headGemm).to(torch::kFloat32);
}

std::string Gpt2LMHeadModel::tiedHeadOwner() const { return lm_head ? "" : "transformer.wte"; }

}  // namespace plab
