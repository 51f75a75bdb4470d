#include "model/layers.h"

#include <cmath>

#include "util/errors.h"

namespace plab {

// Parameters are allocated uninitialised; createModel()/loadPretrained() fill them.
Conv1DImpl::Conv1DImpl(int64_t in, int64_t out) : torch::nn::Module("Conv1D") {
  weight = register_parameter("weight", torch::empty({in, out}));
  bias = register_parameter("bias", torch::zeros({out}));
}

torch::Tensor Conv1DImpl::forward(const torch::Tensor& x) {
  const torch::Tensor in = x.to(weight.scalar_type());
  auto outShape = in.sizes().vec();
  outShape.back() = weight.size(1);
  return torch::addmm(bias, in.reshape({-1, weight.size(0)}), weight).view(outShape);
}

LinearImpl::LinearImpl(int64_t in, int64_t out, bool withBias) : torch::nn::Module("Linear") {
  weight = register_parameter("weight", torch::empty({out, in}));
  if (withBias) bias = register_parameter("bias", torch::zeros({out}));
}

torch::Tensor LinearImpl::forward(const torch::Tensor& x) {
  return torch::nn::functional::linear(x.to(weight.scalar_type()), weight,
                                       bias.defined() ? bias.to(weight.scalar_type()) : bias);
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
  if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") {
    // Written out rather than gelu(approximate="tanh"), which torch 1.12 lacks.
    const double c = std::sqrt(2.0 / M_PI);
    return 0.5 * x * (1.0 + torch::tanh(c * (x + 0.044715 * x * x * x)));
  }
  if (name == "gelu") return torch::gelu(x);
  if (name == "relu") return torch::relu(x);
  if (name == "silu" || name == "swish") return torch::silu(x);
  throw ModelError("unsupported activation '" + name + "'");
}

torch::Tensor causalAttention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                              std::optional<double> scale, int64_t slidingWindow) {
  const int64_t T = q.size(2), headDim = q.size(3);
  const torch::Tensor q32 = q.to(torch::kFloat32), k32 = k.to(torch::kFloat32), v32 = v.to(torch::kFloat32);
  torch::Tensor scores = torch::matmul(q32, k32.transpose(-2, -1));
  if (!scale) scores = scores / std::sqrt(static_cast<double>(headDim));
  else if (*scale != 1.0) scores = scores * *scale;
  const auto boolOptions = torch::TensorOptions().dtype(torch::kBool).device(q.device());
  torch::Tensor masked = torch::ones({T, T}, boolOptions).triu(1);
  if (slidingWindow > 0 && slidingWindow < T)  // key j is visible from i only when i - j < window
    masked = masked.logical_or(torch::ones({T, T}, boolOptions).tril(-slidingWindow));
  scores = scores.masked_fill(masked, -std::numeric_limits<float>::infinity());
  const torch::Tensor out = torch::matmul(torch::softmax(scores, -1), v32);  // [B, H, T, D]
  return out.transpose(1, 2).contiguous().view({q.size(0), T, q.size(1) * headDim});
}

}  // namespace plab
