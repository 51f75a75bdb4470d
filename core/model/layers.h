#pragma once
// Leaf modules shared by the GPT-2 and Llama models. Each one computes in the
// dtype of its own parameters (casting its input), which is what lets any
// per-layer bf16/fp32 mix run without glue code (see causal_lm.h).
#include <torch/torch.h>

#include <optional>
#include <string>

#include "model/gemm_slot.h"

namespace plab {

// GPT-2's transposed linear layer: weight [in, out], y = x @ W + b.
class Conv1DImpl : public torch::nn::Module {
 public:
  Conv1DImpl(int64_t in, int64_t out);
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor weight, bias;
  GemmSlot gemm;  // the product's GEMM format (model/quantized_linear.h)
};

// y = x @ W^T (+ b) with weight [out, in] like torch.nn.Linear.
class LinearImpl : public torch::nn::Module {
 public:
  LinearImpl(int64_t in, int64_t out, bool withBias);
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor weight, bias;  // bias undefined when withBias is false
  GemmSlot gemm;  // the product's GEMM format (model/quantized_linear.h)
};

class EmbeddingImpl : public torch::nn::Module {
 public:
  EmbeddingImpl(int64_t count, int64_t dim);
  torch::Tensor forward(const torch::Tensor& ids);
  torch::Tensor weight;
};

// Statistics in fp32, affine transform in the parameters' dtype.
class LayerNormImpl : public torch::nn::Module {
 public:
  LayerNormImpl(int64_t dim, double eps);
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor weight, bias;
  double eps;
};

// Hugging Face LlamaRMSNorm: normalise in fp32, then scale by the weight.
class RMSNormImpl : public torch::nn::Module {
 public:
  RMSNormImpl(int64_t dim, double eps);
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor weight;
  double eps;
};

// hidden_act / activation_function by its Hugging Face name.
torch::Tensor applyActivation(const std::string& name, const torch::Tensor& x);

// Causal self-attention on [B, heads, T, head_dim] queries and
// [B, kv_heads, T, head_dim] keys and values (kv_heads divides heads:
// grouped-query attention), through at::scaled_dot_product_attention.
// It computes in bf16 (fp16) when q, k and v are all bf16 (fp16: the block's
// projections run in it, as under model.to(torch.bfloat16) or model.half()),
// else in fp32, and returns
// [B, T, heads * head_dim] in that dtype. scale multiplies q.k (default
// 1/sqrt(head_dim)); slidingWindow > 0 also masks keys slidingWindow or more
// positions back (Mistral).
torch::Tensor causalAttention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                              std::optional<double> scale = std::nullopt, int64_t slidingWindow = 0);

}  // namespace plab
