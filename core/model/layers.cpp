#include "model/layers.h"

#include <cmath>
#include <cstdlib>
#include <limits>

#include "model/bf16_linear.h"
#include "model/quantized_linear.h"
#include "model/shadow_gemm.h"
#include "util/errors.h"

namespace plab {

// Parameters are allocated uninitialised; createModel()/loadPretrained() fill them.
Conv1DImpl::Conv1DImpl(int64_t in, int64_t out) : torch::nn::Module("Conv1D") {
  weight = register_parameter("weight", torch::empty({in, out}));
  bias = register_parameter("bias", torch::zeros({out}));
}

torch::Tensor Conv1DImpl::forward(const torch::Tensor& x) {
  recordShadowGemm(x, weight.t(), gemm);
  return linearInGemmFormat(x, weight.t(), bias, gemm);  // x @ W + b, as a linear layer on the transposed view
}

LinearImpl::LinearImpl(int64_t in, int64_t out, bool withBias) : torch::nn::Module("Linear") {
  weight = register_parameter("weight", torch::empty({out, in}));
  if (withBias) bias = register_parameter("bias", torch::zeros({out}));
}

torch::Tensor LinearImpl::forward(const torch::Tensor& x) {
  recordShadowGemm(x, weight, gemm);
  return linearInGemmFormat(x, weight, bias, gemm);
}

EmbeddingImpl::EmbeddingImpl(int64_t count, int64_t dim) : torch::nn::Module("Embedding") {
  weight = register_parameter("weight", torch::empty({count, dim}));
}

torch::Tensor EmbeddingImpl::forward(const torch::Tensor& ids) { return torch::embedding(weight, ids); }

LayerNormImpl::LayerNormImpl(int64_t dim, double eps) : torch::nn::Module("LayerNorm"), eps(eps) {
  weight = register_parameter("weight", torch::ones({dim}));
  bias = register_parameter("bias", torch::zeros({dim}));
}

torch::Tensor LayerNormImpl::forward(const torch::Tensor& x) {
  const auto dtype = weight.scalar_type();
  if (dtype == torch::kFloat32)
    return torch::layer_norm(x.to(torch::kFloat32), {weight.size(0)}, weight, bias, eps);
  const torch::Tensor normalized = torch::layer_norm(x.to(torch::kFloat32), {weight.size(0)}, {}, {}, eps);
  return normalized.to(dtype) * weight + bias.to(dtype);
}

RMSNormImpl::RMSNormImpl(int64_t dim, double eps) : torch::nn::Module("RMSNorm"), eps(eps) {
  weight = register_parameter("weight", torch::ones({dim}));
}

torch::Tensor RMSNormImpl::forward(const torch::Tensor& x) {
  const torch::Tensor x32 = x.to(torch::kFloat32);
  const torch::Tensor normalized = x32 * torch::rsqrt(x32.pow(2).mean(-1, /*keepdim=*/true) + eps);
  return weight * normalized.to(weight.scalar_type());
}

torch::Tensor applyActivation(const std::string& name, const torch::Tensor& x) {
  // Each written as transformers writes it, so that bf16 rounds at the same points.
  if (name == "gelu_new")
    return 0.5 * x * (1.0 + torch::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * torch::pow(x, 3.0))));
  if (name == "gelu_fast") return 0.5 * x * (1.0 + torch::tanh(x * 0.7978845608 * (1.0 + 0.044715 * x * x)));
  if (name == "gelu_pytorch_tanh") return torch::gelu(x, "tanh");
  if (name == "gelu") return torch::gelu(x);
  if (name == "relu") return torch::relu(x);
  if (name == "silu" || name == "swish") return torch::silu(x);
  if (name == "gelu_python") return x * 0.5 * (1.0 + torch::erf(x / std::sqrt(2.0)));
  if (name == "gelu_python_tanh" || name == "gelu_accurate")
    return x * 0.5 * (1.0 + torch::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * torch::pow(x, 3.0))));
  if (name == "gelu_10") return torch::clamp(torch::gelu(x), -10, 10);
  if (name == "quick_gelu") return x * torch::sigmoid(1.702 * x);
  if (name == "laplace") return 0.5 * (1.0 + torch::erf((x - 0.707107).div(0.282095 * std::sqrt(2.0))));
  if (name == "hardswish") return torch::hardswish(x);
  if (name == "leaky_relu") return torch::leaky_relu(x, 0.01);
  if (name == "linear") return x;
  if (name == "mish") return torch::mish(x);
  if (name == "relu2") return torch::square(torch::relu(x));
  if (name == "relu6") return torch::hardtanh(x, 0.0, 6.0);
  if (name == "sigmoid") return torch::sigmoid(x);
  if (name == "sqrtsoftplus") return torch::softplus(x).sqrt();
  if (name == "tanh") return torch::tanh(x);
  throw ModelError("unsupported activation '" + name + "'");
}

namespace {

// PLAB_ATTENTION=explicit: the unfused formula this project ran before
// scaled_dot_product_attention (scores, softmax and product in fp32, the kv
// heads repeated), kept for before/after benchmarks only.
bool explicitAttentionRequested() {
  static const bool requested = [] {
    const char* env = std::getenv("PLAB_ATTENTION");
    return env && std::string(env) == "explicit";
  }();
  return requested;
}

torch::Tensor explicitCausalAttention(const torch::Tensor& q, torch::Tensor k, torch::Tensor v, double scale,
                                      int64_t slidingWindow) {
  const int64_t B = q.size(0), heads = q.size(1), T = q.size(2), headDim = q.size(3);
  if (k.size(1) != heads) {
    k = k.repeat_interleave(heads / k.size(1), 1);
    v = v.repeat_interleave(heads / v.size(1), 1);
  }
  torch::Tensor scores = torch::matmul(q.to(torch::kFloat32), k.to(torch::kFloat32).transpose(-2, -1)) * scale;
  const auto boolOptions = torch::TensorOptions().dtype(torch::kBool).device(q.device());
  torch::Tensor masked = torch::ones({T, T}, boolOptions).triu(1);
  if (slidingWindow > 0 && slidingWindow < T)
    masked = masked.logical_or(torch::ones({T, T}, boolOptions).tril(-slidingWindow));
  scores = scores.masked_fill(masked, -std::numeric_limits<float>::infinity());
  const torch::Tensor out = torch::matmul(torch::softmax(scores, -1), v.to(torch::kFloat32));
  return out.transpose(1, 2).contiguous().view({B, T, heads * headDim});
}

}  // namespace

torch::Tensor causalAttention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                              std::optional<double> scale, int64_t slidingWindow) {
  const int64_t B = q.size(0), heads = q.size(1), T = q.size(2), headDim = q.size(3);
  if (explicitAttentionRequested())
    return explicitCausalAttention(q, k, v, scale ? *scale : 1.0 / std::sqrt(static_cast<double>(headDim)),
                                   slidingWindow);
  // One dtype for the whole product: bf16 (or fp16) when the block's
  // projections all produced it (as under model.to(torch.bfloat16) or
  // model.half()), fp32 otherwise.
  const auto low = q.scalar_type();
  const bool allLow = (low == torch::kBFloat16 || low == torch::kFloat16) && k.scalar_type() == low &&
                      v.scalar_type() == low;
  const auto dtype = allLow ? low : torch::kFloat32;
  const torch::Tensor qc = q.to(dtype), kc = k.to(dtype), vc = v.to(dtype);
  const bool groupedQuery = kc.size(1) != heads;  // GQA: each kv head serves heads / kv_heads query heads
  std::optional<torch::Tensor> mask;
  bool isCausal = true;
  if (slidingWindow > 0 && slidingWindow < T) {  // key j is visible from i only when 0 <= i - j < window
    const auto boolOptions = torch::TensorOptions().dtype(torch::kBool).device(q.device());
    const torch::Tensor ones = torch::ones({T, T}, boolOptions);
    mask = ones.tril().logical_and(ones.triu(-(slidingWindow - 1)));
    isCausal = false;
  }
  const double softmaxScale = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(headDim));
  const torch::Tensor out = at::scaled_dot_product_attention(qc, kc, vc, mask, /*dropout_p=*/0.0, isCausal,
                                                             softmaxScale, groupedQuery);  // [B, H, T, D]
  return out.transpose(1, 2).contiguous().view({B, T, heads * headDim});
}

}  // namespace plab
