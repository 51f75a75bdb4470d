#pragma once
// GPT2LMHeadModel with Hugging Face parameter names:
// transformer.{wte,wpe,h.N.{ln_1,attn.c_attn,attn.c_proj,ln_2,mlp.c_fc,mlp.c_proj},ln_f}
// and lm_head tied to transformer.wte (unless tie_word_embeddings is false).
#include <memory>

#include "model/causal_lm.h"
#include "model/layers.h"

namespace plab {

class Gpt2AttentionImpl : public torch::nn::Module {
 public:
  Gpt2AttentionImpl(const ModelConfig& c, int64_t layerIndex);
  torch::Tensor forward(const torch::Tensor& x);  // [B, T, H] -> [B, T, H] in c_proj's dtype
  std::shared_ptr<Conv1DImpl> c_attn, c_proj;
  int64_t heads;
  double scale;  // multiplies q.k: scale_attn_weights and scale_attn_by_inverse_layer_idx
};

class Gpt2MlpImpl : public torch::nn::Module {
 public:
  explicit Gpt2MlpImpl(const ModelConfig& c);
  torch::Tensor forward(const torch::Tensor& x);
  std::shared_ptr<Conv1DImpl> c_fc, c_proj;
  std::string activation;
};

class Gpt2BlockImpl : public torch::nn::Module {
 public:
  Gpt2BlockImpl(const ModelConfig& c, int64_t layerIndex);
  torch::Tensor forward(const torch::Tensor& residual);  // fp32 in, fp32 out
  std::shared_ptr<LayerNormImpl> ln_1, ln_2;
  std::shared_ptr<Gpt2AttentionImpl> attn;
  std::shared_ptr<Gpt2MlpImpl> mlp;
};

class Gpt2ModelImpl : public torch::nn::Module {
 public:
  explicit Gpt2ModelImpl(const ModelConfig& c);
  torch::Tensor forward(const torch::Tensor& input_ids);  // final hidden states (ln_f dtype)
  std::shared_ptr<EmbeddingImpl> wte, wpe;
  torch::nn::ModuleList h;
  std::shared_ptr<LayerNormImpl> ln_f;
};

class Gpt2LMHeadModel : public CausalLM {
 public:
  explicit Gpt2LMHeadModel(const ModelConfig& c);
  torch::Tensor forward(const torch::Tensor& input_ids) override;
  std::string tiedHeadOwner() const override;
  std::shared_ptr<Gpt2ModelImpl> transformer;
  std::shared_ptr<LinearImpl> lm_head;  // null when tied to transformer.wte
};

}  // namespace plab
