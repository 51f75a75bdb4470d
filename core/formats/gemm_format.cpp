#include "formats/gemm_format.h"

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

QuantizedTensor quantizeDequantize(const torch::Tensor& x, GemmFormat format, GemmRole role) {
  if (x.scalar_type() != torch::kFloat32 && x.scalar_type() != torch::kBFloat16)
    throw std::invalid_argument("quantizeDequantize: fp32 or bf16 input expected, got " +
                                std::string(c10::toString(x.scalar_type())));
  const torch::Tensor in = x.contiguous();
  formats::QuantizeArgs a;
  a.scheme = formats::schemeOf(format, role);
  a.inBf16 = in.scalar_type() == torch::kBFloat16;
  a.in = in.data_ptr();
  a.cols = in.dim() == 0 ? 1 : in.size(-1);
  a.rows = a.cols == 0 ? 0 : in.numel() / a.cols;
  QuantizedTensor q;
  q.values = torch::empty(in.sizes(), in.options().dtype(torch::kFloat32));
  a.out = q.values.data_ptr<float>();
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
  q.tensorScale = torch::tensor(formats::quantizeCpu(a), torch::kFloat32).reshape({});
  return q;
}

QuantizedTensor quantizeDequantizeColumns(const torch::Tensor& x, GemmFormat format, GemmRole role) {
  if (x.dim() != 2) throw std::invalid_argument("quantizeDequantizeColumns: a 2-D tensor expected");
  const formats::Scheme scheme = formats::schemeOf(format, role);
  if (!x.is_cpu() || formats::blockSizeOf(scheme) == 0) {
    // Elementwise schemes do not care about the layout; other devices take the copy.
    QuantizedTensor q = quantizeDequantize(formats::blockSizeOf(scheme) == 0 ? x : x.t().contiguous(), format, role);
    if (formats::blockSizeOf(scheme) != 0) q.values = q.values.t();
    return q;
  }
  if (x.scalar_type() != torch::kFloat32 && x.scalar_type() != torch::kBFloat16)
    throw std::invalid_argument("quantizeDequantizeColumns: fp32 or bf16 input expected");
  const torch::Tensor in = x.contiguous();
  formats::QuantizeArgs a;
  a.scheme = scheme;
  a.inBf16 = in.scalar_type() == torch::kBFloat16;
  a.in = in.data_ptr();
  a.rows = in.size(0);
  a.cols = in.size(1);
  QuantizedTensor q;
  q.values = torch::empty(in.sizes(), in.options().dtype(torch::kFloat32));
  a.out = q.values.data_ptr<float>();
  q.blockScales = torch::empty({a.cols, formats::blocksPerRow(scheme, a.rows)}, in.options().dtype(torch::kUInt8));
  a.blockScales = q.blockScales.data_ptr<uint8_t>();
  q.tensorScale = torch::tensor(formats::quantizeColumnsCpu(a), torch::kFloat32).reshape({});
  return q;
}

}  // namespace plab
