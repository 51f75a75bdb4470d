#include "model/quantized_linear.h"

#include <functional>

#include "formats/gemm_format.h"
#include "formats/gemm_product.h"
#include "formats/gemm_stats.h"
#include "model/bf16_linear.h"
#include "model/causal_lm.h"
#include "model/layers.h"
#include "precision/precision_plan.h"
#include "util/errors.h"

namespace plab {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// fp8 with per-tensor scaling quantizes each element alone: Q(x^T) = Q(x)^T,
// so the backward reuses one quantized copy instead of quantizing again.
bool perTensor(GemmFormat f) { return f == GemmFormat::Fp8E4m3 || f == GemmFormat::Fp8E5m2; }

torch::Tensor quantized(const torch::Tensor& x, GemmFormat f, GemmRole role, GemmStatsCollector* stats,
                        const std::string& layer) {
  QuantizedTensor q = quantizeDequantize(x, f, role);
  if (stats && stats->armed()) stats->record(layer, role, f, x, q);
  return q.values;
}

// A bf16 layer's products take bf16 operands where LibTorch multiplies bf16
// natively (CUDA, a CPU with AVX512-BF16 / AMX), else fp32 ones holding the
// same values (bf16_linear.h: the CPU's slow bf16 path is avoided the same way).
torch::ScalarType operandDtype(const torch::Tensor& weight) {
  const bool native = !weight.is_cpu() || cpuBf16GemmPath() == Bf16GemmPath::Native;
  return native ? torch::kBFloat16 : torch::kFloat32;
}

// The operand of a bf16 layer's product; with `stats` armed, its statistics
// (the same figures as from the dequantized values: measureGemmOperand).
GemmOperand operand(const torch::Tensor& x, GemmFormat f, GemmRole role, GemmStatsCollector* stats,
                    const std::string& layer, torch::ScalarType dtype) {
  GemmOperand op = quantizeForGemm(x, f, role, dtype);
  if (stats && stats->armed()) stats->record(layer, role, f, x, op);
  return op;
}

struct Args {
  GemmFormat format;
  GemmStatsCollector* stats;
  std::string layer;
};

void save(AutogradContext* ctx, const Args& a) {
  ctx->saved_data["format"] = static_cast<int64_t>(a.format);
  ctx->saved_data["stats"] = reinterpret_cast<int64_t>(a.stats);
  ctx->saved_data["layer"] = a.layer;
}

Args restore(AutogradContext* ctx) {
  return {static_cast<GemmFormat>(ctx->saved_data["format"].toInt()),
          reinterpret_cast<GemmStatsCollector*>(ctx->saved_data["stats"].toInt()),
          ctx->saved_data["layer"].toStringRef()};
}

// A bf16 layer's y: bf16 products of the operands (gemm_product.h).
torch::Tensor forwardBf16(AutogradContext* ctx, const torch::Tensor& x2d, const torch::Tensor& weight,
                          const torch::Tensor& bias, const Args& a) {
  const auto dtype = operandDtype(weight);
  const GemmOperand qx = operand(x2d, a.format, GemmRole::Input, a.stats, a.layer, dtype);
  const GemmOperand qw = operand(weight, a.format, GemmRole::Weight, a.stats, a.layer, dtype);
  ctx->saved_data["weight_scale"] = qw.tensorScale;  // for W's columns in backward
  return bf16GemmProduct(qx.values, qw.values.t(), qx, qw, bias);
}

torch::Tensor forwardProduct(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& weight,
                             const torch::Tensor& bias, const Args& a) {
  ctx->save_for_backward({x, weight});
  save(ctx, a);
  const torch::Tensor x2d = x.reshape({-1, x.size(-1)});
  auto sizes = x.sizes().vec();
  sizes.back() = weight.size(0);
  if (weight.scalar_type() == torch::kBFloat16) return forwardBf16(ctx, x2d, weight, bias, a).view(sizes);
  // Other layers: fp32 products of the dequantized values, as torchao's emulation.
  const torch::Tensor qx = quantized(x2d, a.format, GemmRole::Input, a.stats, a.layer);
  const torch::Tensor qw = quantized(weight, a.format, GemmRole::Weight, a.stats, a.layer);
  const torch::Tensor bias32 = bias.defined() ? bias.to(torch::kFloat32) : bias;
  torch::Tensor y = at::linear(qx, qw, bias32);  // the bias joins the fp32 product before its one rounding
  return y.view(sizes).to(weight.scalar_type());
}

// A bf16 layer's dX and dW (gemm_product.h), operands as in backwardFp32.
std::pair<torch::Tensor, torch::Tensor> backwardBf16(const torch::Tensor& g, const torch::Tensor& x2d,
                                                     const torch::Tensor& weight, const torch::Tensor& weightScale,
                                                     const Args& a) {
  const auto dtype = operandDtype(weight);
  const GemmOperand qg = operand(g, a.format, GemmRole::GradOutput, a.stats, a.layer, dtype);
  // W's tensor scale from the forward (the weight has not changed since).
  const GemmOperand qwOut = quantizeForGemmColumns(weight, a.format, GemmRole::Weight, dtype, weightScale);
  const GemmOperand qgTokens =
      perTensor(a.format) ? qg : quantizeForGemmColumns(g, a.format, GemmRole::GradOutput, dtype, qg.tensorScale);
  const GemmOperand qxTokens = quantizeForGemmColumns(x2d, a.format, GemmRole::Input, dtype);
  return {bf16GemmProduct(qg.values, qwOut.values, qg, qwOut, {}),
          bf16GemmProduct(qgTokens.values.t(), qxTokens.values, qgTokens, qxTokens, {})};
}

// Any other layer's dX and dW: fp32 products of the dequantized operands.
std::pair<torch::Tensor, torch::Tensor> backwardFp32(const torch::Tensor& g, const torch::Tensor& x2d,
                                                     const torch::Tensor& weight, const Args& a) {
  const torch::Tensor qg = quantized(g, a.format, GemmRole::GradOutput, a.stats, a.layer);
  // Each operand with the product's reduction dimension last: W along out,
  // dY and x along the tokens. quantizeDequantizeColumns quantizes down the
  // first dimension in place, the same bits as quantizing the transposed copy.
  const torch::Tensor qwOut = quantizeDequantizeColumns(weight, a.format, GemmRole::Weight).values;  // [out, in]
  const torch::Tensor qgTokens =
      perTensor(a.format) ? qg : quantizeDequantizeColumns(g, a.format, GemmRole::GradOutput).values;  // [N, out]
  const torch::Tensor qxTokens = quantizeDequantizeColumns(x2d, a.format, GemmRole::Input).values;      // [N, in]
  return {torch::mm(qg, qwOut),               // [N, out] x [out, in]
          torch::mm(qgTokens.t(), qxTokens)};  // [out, N] x [N, in]
}

variable_list backwardProducts(AutogradContext* ctx, const torch::Tensor& grad, bool withBias) {
  const auto saved = ctx->get_saved_variables();
  const torch::Tensor& x = saved[0];
  const torch::Tensor& weight = saved[1];
  const Args a = restore(ctx);
  // The quantizers read bf16 (or fp32) as it is: no fp32 copy of dY.
  const torch::Tensor g = grad.reshape({-1, grad.size(-1)}).contiguous();  // [N, out]
  const torch::Tensor x2d = x.reshape({-1, x.size(-1)});                    // [N, in]
  const auto [dx, dw] = weight.scalar_type() == torch::kBFloat16
                            ? backwardBf16(g, x2d, weight, ctx->saved_data["weight_scale"].toTensor(), a)
                            : backwardFp32(g, x2d, weight, a);
  variable_list grads = {dx.view(x.sizes()).to(x.scalar_type()), dw.to(weight.scalar_type())};
  if (withBias) grads.push_back(g.sum(0, false, torch::kFloat32).to(weight.scalar_type()));
  return grads;
}

// Two functions, with and without a bias: autograd takes no undefined input.
struct QuantizedLinearFn : public torch::autograd::Function<QuantizedLinearFn> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& weight,
                               const Args& a) {
    return forwardProduct(ctx, x, weight, {}, a);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    variable_list out = backwardProducts(ctx, grads[0], false);
    out.emplace_back();  // Args
    return out;
  }
};

struct QuantizedLinearWithBiasFn : public torch::autograd::Function<QuantizedLinearWithBiasFn> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& weight,
                               const torch::Tensor& bias, const Args& a) {
    return forwardProduct(ctx, x, weight, bias, a);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    variable_list out = backwardProducts(ctx, grads[0], true);
    out.emplace_back();  // Args
    return out;
  }
};

GemmSlot* slotOf(torch::nn::Module& m) {
  if (auto* linear = dynamic_cast<LinearImpl*>(&m)) return &linear->gemm;
  if (auto* conv = dynamic_cast<Conv1DImpl*>(&m)) return &conv->gemm;
  return nullptr;
}

// Every module with its path, the root included (named_modules would need
// the root to be held in a shared_ptr).
void visitModules(torch::nn::Module& m, const std::string& path,
                  const std::function<void(torch::nn::Module&, const std::string&)>& f) {
  f(m, path);
  for (const auto& child : m.named_children())
    visitModules(*child.value(), path.empty() ? child.key() : path + "." + child.key(), f);
}

}  // namespace

torch::Tensor quantizedLinear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
                              GemmFormat format, GemmStatsCollector* stats, const std::string& layer) {
  const auto dtype = weight.scalar_type();
  const Args a{format, stats, layer};
  const torch::Tensor in = x.to(dtype);
  if (bias.defined()) return QuantizedLinearWithBiasFn::apply(in, weight, bias.to(dtype), a);
  return QuantizedLinearFn::apply(in, weight, a);
}

torch::Tensor linearInGemmFormat(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
                                 const GemmSlot& slot) {
  if (slot.format == GemmFormat::Bf16) return linearInWeightDtype(x, weight, bias);
  return quantizedLinear(x, weight, bias, slot.format, slot.stats, slot.layer);
}

std::map<std::string, GemmFormat> applyGemmFormats(torch::nn::Module& model, const PrecisionPlan& plan,
                                                   bool ignoreFormats) {
  auto* lm = dynamic_cast<CausalLM*>(&model);
  std::map<std::string, GemmFormat> resolved =
      plan.resolveGemmFormats(lm ? describeModules(*lm) : describeModules(model));
  if (ignoreFormats)
    for (auto& [path, f] : resolved) f = GemmFormat::Bf16;
  auto formatOf = [&](const std::string& path) {
    auto it = resolved.find(path);
    return it == resolved.end() ? GemmFormat::Bf16 : it->second;
  };
  std::map<std::string, GemmFormat> set;
  visitModules(model, "", [&](torch::nn::Module& m, const std::string& path) {
    GemmSlot* slot = slotOf(m);
    if (!slot) {
      if (formatOf(path) != GemmFormat::Bf16)
        throw ConfigError("precision plan: module '" + path + "' (" + m.name() + ") cannot run its product in " +
                          gemmFormatId(formatOf(path)) + "; only the models' Linear and Conv1D layers can");
      return;
    }
    slot->format = formatOf(path);
    slot->layer = path;
    set[path] = slot->format;
  });
  if (lm && !lm->tiedHeadOwner().empty()) {
    lm->headGemm.format = formatOf("lm_head");
    lm->headGemm.layer = "lm_head";
    set["lm_head"] = lm->headGemm.format;
  }
  return set;
}

void attachGemmStats(torch::nn::Module& model, GemmStatsCollector* stats) {
  forEachGemmSlot(model, [stats](GemmSlot& slot) { slot.stats = stats; });
}

void forEachGemmSlot(torch::nn::Module& model, const std::function<void(GemmSlot&)>& f) {
  visitModules(model, "", [&](torch::nn::Module& m, const std::string&) {
    if (GemmSlot* slot = slotOf(m)) f(*slot);
  });
  if (auto* lm = dynamic_cast<CausalLM*>(&model)) f(lm->headGemm);
}

}  // namespace plab
