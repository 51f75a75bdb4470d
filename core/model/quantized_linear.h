#pragma once
// y = x W^T + b with every GEMM operand fake-quantized in a GEMM format
// along its reduction dimension, as torchao's float8 and MX training do:
//   forward  y  = Q_in(x) · Q_w(W)^T                (both along in-features)
//   backward dX = Q_g(dY) · Q_w(W^T)^T              (both along out-features)
//            dW = Q_g(dY^T) · Q_in(x^T)^T           (both along the tokens)
// Q_g quantizes in GemmRole::GradOutput (e5m2 in fp8-e4m3). A bf16 layer
// multiplies the operands as the format's GEMM takes them (gemm_product.h:
// bf16 values, exact; fp32 accumulation; the tensor scales and the bias
// applied before one rounding to bf16); any other layer takes fp32 products of the dequantized
// operands, as torchao's emulation does. The bias gradient is the fp32 sum
// of dY, unquantized. y, dX, dW and it are in the layer's dtype.
// A simulation: no fp8/fp4 tensor cores, LibTorch's accumulation order.
#include <torch/torch.h>

#include <functional>
#include <map>
#include <string>

#include "formats/gemm_format_id.h"
#include "model/gemm_slot.h"

namespace plab {

class CausalLM;
struct PrecisionPlan;

// x is cast to weight's dtype first (as linearInWeightDtype); bias may be
// undefined. With `stats` armed, the layer's input, weight and output
// gradient (as quantized for the forward and dX products) are recorded.
torch::Tensor quantizedLinear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
                              GemmFormat format, GemmStatsCollector* stats = nullptr, const std::string& layer = {});

// The layers' entry point: bf16 is linearInWeightDtype (today's path, an
// fp32 layer stays fp32), any other format quantizedLinear.
torch::Tensor linearInGemmFormat(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
                                 const GemmSlot& slot);

// Sets the GEMM slot of every Linear, Conv1D and the tied head of `model`
// (a CausalLM, or any module tree of Linear/Conv1D layers) from
// plan.resolveGemmFormats; ignoreFormats (the fp32 reference) sets bf16
// everywhere. Returns the paths and formats set.
std::map<std::string, GemmFormat> applyGemmFormats(torch::nn::Module& model, const PrecisionPlan& plan,
                                                   bool ignoreFormats = false);

// Points every slot's statistics at `stats` (null: none).
void attachGemmStats(torch::nn::Module& model, GemmStatsCollector* stats);

// Every GEMM slot of `model`: its Linear and Conv1D layers' and, for a
// CausalLM, the tied head's.
void forEachGemmSlot(torch::nn::Module& model, const std::function<void(GemmSlot&)>& f);

}  // namespace plab
