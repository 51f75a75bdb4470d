#pragma once
// LlamaForCausalLM (also Mistral, Qwen2 and Qwen3, which share the layout) with
// Hugging Face parameter names:
// model.{embed_tokens,layers.N.{self_attn.{q,k,v,o}_proj,mlp.{gate,up,down}_proj,
// input_layernorm,post_attention_layernorm},norm} and lm_head (or tied);
// Qwen3 adds self_attn.{q_norm,k_norm} (RMSNorm over head_dim).
#include <memory>
#include <string>

#include "model/causal_lm.h"
#include "model/layers.h"

namespace plab {

// HF rotary embedding (rotate_half convention), computed in fp32 on the fly.
torch::Tensor applyRotary(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin);

class LlamaAttentionImpl : public torch::nn::Module {
 public:
  LlamaAttentionImpl(const ModelConfig& c, const std::string& prefix);
  // x: [B, T, H]; cos/sin: [T, head_dim] fp32.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin);
  std::shared_ptr<LinearImpl> q_proj, k_proj, v_proj, o_proj;
  std::shared_ptr<RMSNormImpl> q_norm, k_norm;  // qwen3 only, else null
  int64_t heads, kvHeads, headDim, slidingWindow;
};

class LlamaMlpImpl : public torch::nn::Module {
 public:
  LlamaMlpImpl(const ModelConfig& c, const std::string& prefix);
  torch::Tensor forward(const torch::Tensor& x);
  std::shared_ptr<LinearImpl> gate_proj, up_proj, down_proj;
  std::string activation;
};

class LlamaDecoderLayerImpl : public torch::nn::Module {
 public:
  LlamaDecoderLayerImpl(const ModelConfig& c, const std::string& prefix);
  torch::Tensor forward(const torch::Tensor& residual, const torch::Tensor& cos, const torch::Tensor& sin);
  std::shared_ptr<LlamaAttentionImpl> self_attn;
  std::shared_ptr<LlamaMlpImpl> mlp;
  std::shared_ptr<RMSNormImpl> input_layernorm, post_attention_layernorm;
};

class LlamaModelImpl : public torch::nn::Module {
 public:
  LlamaModelImpl(const ModelConfig& c, const std::string& prefix);
  torch::Tensor forward(const torch::Tensor& input_ids);  // final hidden states (norm dtype)
  std::shared_ptr<EmbeddingImpl> embed_tokens;
  torch::nn::ModuleList layers;
  std::shared_ptr<RMSNormImpl> norm;
  ModelConfig config;  // for the rotary frequencies
};

class LlamaForCausalLM : public CausalLM {
 public:
  explicit LlamaForCausalLM(const ModelConfig& c);
  torch::Tensor forward(const torch::Tensor& input_ids) override;
  std::string tiedHeadOwner() const override;
  std::shared_ptr<LlamaModelImpl> model;
  std::shared_ptr<LinearImpl> lm_head;  // null when tied to model.embed_tokens
};

// "Llama", "Mistral", "Qwen2" or "Qwen3": the prefix of the HF class names.
std::string llamaClassPrefix(const ModelConfig& c);

}  // namespace plab
