#include "formats/gemm_product.h"

namespace plab {

torch::Tensor bf16GemmProduct(const torch::Tensor& a, const torch::Tensor& b, const GemmOperand& opA,
                              const GemmOperand& opB, const torch::Tensor& bias) {
  // torchao's _scaled_mm scales multiply in fp32; the product is exact in
  // double, so alpha reaches the kernel as that fp32 value.
  const double alpha = (opA.scale * opB.scale).item<double>();
  const torch::Tensor self = bias.defined() ? bias.to(a.scalar_type()) : torch::zeros({}, a.options());
  return at::addmm(self, a, b, bias.defined() ? 1.0 : 0.0, alpha).to(torch::kBFloat16);
}

}  // namespace plab
