#include "precision/bf16_rounding.h"

#include "util/errors.h"

namespace plab {

torch::Tensor roundToBf16Nearest(const torch::Tensor& fp32) { return fp32.to(torch::kBFloat16); }

torch::Tensor roundToBf16Stochastic(const torch::Tensor& fp32, torch::Generator& gen) {
  if (fp32.scalar_type() != torch::kFloat32)
    throw Error("roundToBf16Stochastic: expected a float32 tensor, got " +
                std::string(c10::toString(fp32.scalar_type())));
  torch::NoGradGuard noGrad;
  const torch::Tensor x = fp32.contiguous();
  const torch::Tensor bits = x.view(torch::kInt32);
  const torch::Tensor noise =
      torch::randint(0, 1 << 16, x.sizes(), gen, torch::TensorOptions().dtype(torch::kInt32).device(x.device()));
  // Adding to the two's-complement pattern grows the magnitude for either
  // sign. Finite patterns are <= 0x7F7FFFFF in magnitude, so no overflow.
  const torch::Tensor truncated = (bits + noise).bitwise_and_(static_cast<int32_t>(0xFFFF0000u));
  // The low 16 bits are zero now, so the bf16 conversion below is exact.
  const torch::Tensor rounded = torch::where(torch::isfinite(x), truncated.view(torch::kFloat32), x);
  return rounded.to(torch::kBFloat16);
}

torch::Generator makeSeededGenerator(const torch::Device& device, uint64_t seed) {
  torch::Generator gen = at::globalContext().defaultGenerator(device).clone();
  gen.set_current_seed(seed);
  return gen;
}

}  // namespace plab
