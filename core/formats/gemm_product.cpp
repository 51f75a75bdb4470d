#include "formats/gemm_product.h"

namespace plab {

bool productHasScales(GemmFormat format) {
  return format == GemmFormat::Fp8E4m3 || format == GemmFormat::Fp8E5m2 || format == GemmFormat::Nvfp4;
}

torch::Tensor finishBf16Product(torch::Tensor product, GemmFormat format, const GemmOperand& a,
                                const GemmOperand& b, const torch::Tensor& bias) {
  torch::Tensor rounded = product.to(torch::kBFloat16);
  if (!productHasScales(format)) return rounded;
  // torchao's _scaled_mm scales multiply in fp32: scale_a * scale_b.
  const torch::Tensor scale = a.scale * b.scale;
  // On the CPU a 0-dim fp32 tensor multiplies a bf16 tensor in fp32 (one
  // rounding to bf16, checked in test_quantized_linear), in place (the
  // product is consumed). Elsewhere and with a bias, in explicit fp32.
  if (!bias.defined() && rounded.is_cpu()) return rounded.mul_(scale);
  torch::Tensor out = rounded.to(torch::kFloat32).mul_(scale);
  if (bias.defined()) out.add_(bias.to(torch::kFloat32));
  return out.to(torch::kBFloat16);
}

}  // namespace plab
