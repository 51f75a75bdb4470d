#include "formats/gemm_format.h"

#include "formats/operand_buffers.h"
#include "formats/quantize_kernels.h"
#include "util/errors.h"

#ifdef PLAB_HAVE_CUDA_KERNELS
#include <c10/cuda/CUDAStream.h>
#endif

namespace plab {
namespace formats {

// torchao's fp8 training default (Float8LinearConfig, tensorwise): e4m3 for
// the forward operands, e5m2 for the output gradient. The MX and NVFP4
// formats use their element type in every role.
formats::Scheme schemeOf(GemmFormat f, GemmRole role) {
  switch (f) {
    case GemmFormat::Bf16: return formats::Scheme::Bf16;
    case GemmFormat::Fp8E4m3:
      return role == GemmRole::GradOutput ? formats::Scheme::Fp8E5m2Tensor : formats::Scheme::Fp8E4m3Tensor;
    case GemmFormat::Fp8E5m2: return formats::Scheme::Fp8E5m2Tensor;
    case GemmFormat::Mxfp8: return formats::Scheme::Mxfp8;
    case GemmFormat::Mxfp4: return formats::Scheme::Mxfp4;
    case GemmFormat::Nvfp4: return formats::Scheme::Nvfp4;
  }
  throw ConfigError("unknown GEMM format");
}

}  // namespace formats

namespace {

// What the kernels write: the dequantized values in fp32, or a GEMM
// operand (values without the tensor scale) in fp32 or bf16.
struct Output {
  bool gemmOperand = false;
  torch::ScalarType dtype = torch::kFloat32;
};

void checkInput(const torch::Tensor& x, const char* what) {
  if (x.scalar_type() != torch::kFloat32 && x.scalar_type() != torch::kBFloat16)
    throw std::invalid_argument(std::string(what) + ": fp32 or bf16 input expected, got " +
                                std::string(c10::toString(x.scalar_type())));
}

// The values tensor for `in` and the kernel arguments that write into it
// (a GEMM operand on the CPU: a pooled buffer, operand_buffers.h).
torch::Tensor outputFor(const torch::Tensor& in, Output o, formats::QuantizeArgs& a) {
  torch::Tensor values = o.gemmOperand && in.is_cpu() ? emptyOperandBuffer(in.sizes(), o.dtype)
                                                      : torch::empty(in.sizes(), in.options().dtype(o.dtype));
  a.gemmOperand = o.gemmOperand;
  if (o.dtype == torch::kBFloat16) a.outBf16 = reinterpret_cast<uint16_t*>(values.data_ptr<at::BFloat16>());
  else a.out = values.data_ptr<float>();
  return values;
}

// An earlier call's tensor scale of the same tensor, if defined (CPU).
void setKnownTensorScale(formats::QuantizeArgs& a, const torch::Tensor& tensorScale) {
  a.hasKnownTensorScale = tensorScale.defined();
  if (a.hasKnownTensorScale) a.knownTensorScale = tensorScale.item<float>();
}

QuantizedTensor quantizeRows(const torch::Tensor& x, GemmFormat format, GemmRole role, Output o,
                             const torch::Tensor& knownTensorScale = {}) {
  checkInput(x, "quantizeDequantize");
  if (!x.is_cpu() && o.dtype != torch::kFloat32) {
    // The CUDA kernels write fp32; a GEMM operand converts exactly.
    QuantizedTensor q = quantizeRows(x, format, role, Output{o.gemmOperand, torch::kFloat32}, knownTensorScale);
    q.values = q.values.to(o.dtype);
    return q;
  }
  const torch::Tensor in = x.contiguous();
  formats::QuantizeArgs a;
  a.scheme = formats::schemeOf(format, role);
  a.inBf16 = in.scalar_type() == torch::kBFloat16;
  a.in = in.data_ptr();
  a.cols = in.dim() == 0 ? 1 : in.size(-1);
  a.rows = a.cols == 0 ? 0 : in.numel() / a.cols;
  QuantizedTensor q;
  q.values = outputFor(in, o, a);
  const int64_t perRow = formats::blocksPerRow(a.scheme, a.cols);
  if (perRow > 0) {
    q.blockScales = torch::empty({a.rows, perRow}, in.options().dtype(torch::kUInt8));
    a.blockScales = q.blockScales.data_ptr<uint8_t>();
  }
#ifdef PLAB_HAVE_CUDA_KERNELS
  if (in.is_cuda()) {
    torch::Tensor scratch = torch::empty({2}, in.options().dtype(torch::kInt32));
    const auto stream = c10::cuda::getCurrentCUDAStream(in.device().index()).stream();
    auto* amaxBits = reinterpret_cast<uint32_t*>(scratch.data_ptr<int32_t>());
    auto* tensorScale = reinterpret_cast<float*>(amaxBits + 1);
    formats::quantizeCuda(a, amaxBits, tensorScale, stream);
    q.tensorScale = scratch.slice(0, 1, 2).view(torch::kFloat32).reshape({});
    return q;
  }
#endif
  if (!in.is_cpu()) throw std::invalid_argument("quantizeDequantize: no kernels for device " + in.device().str());
  setKnownTensorScale(a, knownTensorScale);
  q.tensorScale = torch::tensor(formats::quantizeCpu(a), torch::kFloat32).reshape({});
  return q;
}

QuantizedTensor quantizeColumns(const torch::Tensor& x, GemmFormat format, GemmRole role, Output o,
                                const torch::Tensor& knownTensorScale = {}) {
  if (x.dim() != 2) throw std::invalid_argument("quantizeDequantizeColumns: a 2-D tensor expected");
  const formats::Scheme scheme = formats::schemeOf(format, role);
  if (!x.is_cpu() || formats::blockSizeOf(scheme) == 0) {
    // Elementwise schemes do not care about the layout; other devices take the copy.
    QuantizedTensor q =
        quantizeRows(formats::blockSizeOf(scheme) == 0 ? x : x.t().contiguous(), format, role, o, knownTensorScale);
    if (formats::blockSizeOf(scheme) != 0) q.values = q.values.t();
    return q;
  }
  checkInput(x, "quantizeDequantizeColumns");
  const torch::Tensor in = x.contiguous();
  formats::QuantizeArgs a;
  a.scheme = scheme;
  a.inBf16 = in.scalar_type() == torch::kBFloat16;
  a.in = in.data_ptr();
  a.rows = in.size(0);
  a.cols = in.size(1);
  QuantizedTensor q;
  q.values = outputFor(in, o, a);
  q.blockScales = torch::empty({a.cols, formats::blocksPerRow(scheme, a.rows)}, in.options().dtype(torch::kUInt8));
  a.blockScales = q.blockScales.data_ptr<uint8_t>();
  setKnownTensorScale(a, knownTensorScale);
  q.tensorScale = torch::tensor(formats::quantizeColumnsCpu(a), torch::kFloat32).reshape({});
  return q;
}

// What the operand's values are multiplied by to dequantize them.
GemmOperand operandOf(QuantizedTensor q, GemmFormat format, GemmRole role) {
  const formats::Scheme scheme = formats::schemeOf(format, role);
  GemmOperand op;
  op.values = std::move(q.values);
  op.blockScales = q.blockScales;
  op.tensorScale = q.tensorScale;
  if (scheme == formats::Scheme::Fp8E4m3Tensor || scheme == formats::Scheme::Fp8E5m2Tensor)
    op.scale = q.tensorScale.reciprocal();
  else if (scheme == formats::Scheme::Nvfp4)
    op.scale = q.tensorScale;
  else
    op.scale = torch::ones({}, q.tensorScale.options());
  return op;
}

Output operandOutput(torch::ScalarType dtype) {
  if (dtype != torch::kFloat32 && dtype != torch::kBFloat16)
    throw std::invalid_argument("quantizeForGemm: a GEMM operand is fp32 or bf16");
  return Output{true, dtype};
}

}  // namespace

QuantizedTensor quantizeDequantize(const torch::Tensor& x, GemmFormat format, GemmRole role) {
  return quantizeRows(x, format, role, Output{});
}

QuantizedTensor quantizeDequantizeColumns(const torch::Tensor& x, GemmFormat format, GemmRole role) {
  return quantizeColumns(x, format, role, Output{});
}

GemmOperand quantizeForGemm(const torch::Tensor& x, GemmFormat format, GemmRole role, torch::ScalarType dtype) {
  return operandOf(quantizeRows(x, format, role, operandOutput(dtype)), format, role);
}

GemmOperand quantizeForGemmColumns(const torch::Tensor& x, GemmFormat format, GemmRole role,
                                   torch::ScalarType dtype, const torch::Tensor& tensorScaleOfX) {
  return operandOf(quantizeColumns(x, format, role, operandOutput(dtype), tensorScaleOfX), format, role);
}

}  // namespace plab
