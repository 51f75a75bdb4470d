#include "model/llama_model.h"

#include <cmath>

#include "model/input_checks.h"
#include "model/quantized_linear.h"
#include "model/shadow_gemm.h"
#include "model/rope.h"

namespace plab {

std::string llamaClassPrefix(const ModelConfig& c) {
  if (c.model_type == "mistral") return "Mistral";
  if (c.model_type == "qwen2") return "Qwen2";
  if (c.model_type == "qwen3") return "Qwen3";
  return "Llama";
}

torch::Tensor applyRotary(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
  const int64_t half = x.size(-1) / 2;
  const torch::Tensor rotated = torch::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
  return x * cos + rotated * sin;
}

LlamaAttentionImpl::LlamaAttentionImpl(const ModelConfig& c, const std::string& prefix)
    : torch::nn::Module(prefix + "Attention"),
      heads(c.num_attention_heads),
      kvHeads(c.num_key_value_heads),
      headDim(c.head_dim),
      slidingWindow(c.sliding_window) {
  q_proj = register_module("q_proj", std::make_shared<LinearImpl>(c.hidden_size, heads * headDim, c.attention_bias));
  k_proj = register_module("k_proj", std::make_shared<LinearImpl>(c.hidden_size, kvHeads * headDim, c.attention_bias));
  v_proj = register_module("v_proj", std::make_shared<LinearImpl>(c.hidden_size, kvHeads * headDim, c.attention_bias));
  o_proj = register_module("o_proj",
                           std::make_shared<LinearImpl>(heads * headDim, c.hidden_size, c.attention_output_bias));
  if (c.qk_norm) {
    q_norm = register_module("q_norm", std::make_shared<RMSNormImpl>(headDim, c.norm_eps));
    k_norm = register_module("k_norm", std::make_shared<RMSNormImpl>(headDim, c.norm_eps));
  }
}

torch::Tensor LlamaAttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
  const int64_t B = x.size(0), T = x.size(1);
  // [B, T, n * D] -> [B, n, T, D] in the projection's dtype, through the
  // per-head norm when present; rotary in that dtype too (transformers casts
  // cos and sin to the hidden states' dtype).
  auto toHeads = [&](const torch::Tensor& t, int64_t n, const std::shared_ptr<RMSNormImpl>& norm) {
    torch::Tensor h = t.reshape({B, T, n, headDim});
    if (norm) h = norm->forward(h);
    return h.transpose(1, 2);
  };
  auto rotate = [&](const torch::Tensor& h) {
    return applyRotary(h, cos.to(h.scalar_type()), sin.to(h.scalar_type()));
  };
  const torch::Tensor q = rotate(toHeads(q_proj->forward(x), heads, q_norm));
  const torch::Tensor k = rotate(toHeads(k_proj->forward(x), kvHeads, k_norm));
  const torch::Tensor v = toHeads(v_proj->forward(x), kvHeads, nullptr);
  return o_proj->forward(causalAttention(q, k, v, std::nullopt, slidingWindow));
}

LlamaMlpImpl::LlamaMlpImpl(const ModelConfig& c, const std::string& prefix)
    : torch::nn::Module(prefix + "MLP"), activation(c.hidden_act) {
  gate_proj = register_module("gate_proj", std::make_shared<LinearImpl>(c.hidden_size, c.intermediate_size, c.mlp_bias));
  up_proj = register_module("up_proj", std::make_shared<LinearImpl>(c.hidden_size, c.intermediate_size, c.mlp_bias));
  down_proj = register_module("down_proj", std::make_shared<LinearImpl>(c.intermediate_size, c.hidden_size, c.mlp_bias));
}

torch::Tensor LlamaMlpImpl::forward(const torch::Tensor& x) {
  return down_proj->forward(applyActivation(activation, gate_proj->forward(x)) * up_proj->forward(x));
}

LlamaDecoderLayerImpl::LlamaDecoderLayerImpl(const ModelConfig& c, const std::string& prefix)
    : torch::nn::Module(prefix + "DecoderLayer") {
  self_attn = register_module("self_attn", std::make_shared<LlamaAttentionImpl>(c, prefix));
  mlp = register_module("mlp", std::make_shared<LlamaMlpImpl>(c, prefix));
  input_layernorm = register_module("input_layernorm", std::make_shared<RMSNormImpl>(c.hidden_size, c.norm_eps));
  post_attention_layernorm =
      register_module("post_attention_layernorm", std::make_shared<RMSNormImpl>(c.hidden_size, c.norm_eps));
}

torch::Tensor LlamaDecoderLayerImpl::forward(const torch::Tensor& residual, const torch::Tensor& cos,
                                             const torch::Tensor& sin) {
  torch::Tensor x = residual + self_attn->forward(input_layernorm->forward(residual), cos, sin).to(torch::kFloat32);
  return x + mlp->forward(post_attention_layernorm->forward(x)).to(torch::kFloat32);
}

LlamaModelImpl::LlamaModelImpl(const ModelConfig& c, const std::string& prefix)
    : torch::nn::Module(prefix + "Model"), config(c) {
  embed_tokens = register_module("embed_tokens", std::make_shared<EmbeddingImpl>(c.vocab_size, c.hidden_size));
  layers = register_module("layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) layers->push_back(std::make_shared<LlamaDecoderLayerImpl>(c, prefix));
  norm = register_module("norm", std::make_shared<RMSNormImpl>(c.hidden_size, c.norm_eps));
}

torch::Tensor LlamaModelImpl::forward(const torch::Tensor& input_ids) {
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat32).device(input_ids.device());
  const RopeFrequencies rope = ropeFrequencies(config, input_ids.device());
  const torch::Tensor freqs = torch::outer(torch::arange(input_ids.size(1), f32), rope.invFreq);
  const torch::Tensor angles = torch::cat({freqs, freqs}, -1);  // [T, head_dim]
  torch::Tensor cos = angles.cos(), sin = angles.sin();
  if (rope.attentionScaling != 1.0) {
    cos = cos * rope.attentionScaling;
    sin = sin * rope.attentionScaling;
  }

  torch::Tensor x = embed_tokens->forward(input_ids).to(torch::kFloat32);
  for (const auto& layer : *layers) x = layer->as<LlamaDecoderLayerImpl>()->forward(x, cos, sin);
  return norm->forward(x);
}

LlamaForCausalLM::LlamaForCausalLM(const ModelConfig& c) : CausalLM(c, llamaClassPrefix(c) + "ForCausalLM") {
  model = register_module("model", std::make_shared<LlamaModelImpl>(c, llamaClassPrefix(c)));
  if (!c.tie_word_embeddings)
    lm_head = register_module("lm_head", std::make_shared<LinearImpl>(c.hidden_size, c.vocab_size, false));
}

torch::Tensor LlamaForCausalLM::forward(const torch::Tensor& input_ids) {
  checkInputIds(input_ids, config());
  const torch::Tensor hidden = model->forward(input_ids);
  if (lm_head) return lm_head->forward(hidden).to(torch::kFloat32);
  // The tied head computes in the embedding's dtype.
  recordShadowGemm(hidden, model->embed_tokens->weight, headGemm);
  return linearInGemmFormat(hidden, model->embed_tokens->weight, {}, headGemm).to(torch::kFloat32);
}

std::string LlamaForCausalLM::tiedHeadOwner() const { return lm_head ? "" : "model.embed_tokens"; }

}  // namespace plab
