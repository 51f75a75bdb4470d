#include "precision/bf16_rounding.h"

#include "util/errors.h"

namespace plab {

torch::Tensor roundToBf16Nearest(const torch::Tensor& fp32) { return fp32.to(torch::kBFloat16); }

torch::Tensor roundToBf16Stochastic(const torch::Tensor& fp32, const torch::Tensor& random16) {
  if (fp32.scalar_type() != torch::kFloat32)
    throw Error("roundToBf16Stochastic: expected a float32 tensor, got " +
                std::string(c10::toString(fp32.scalar_type())));
  torch::NoGradGuard noGrad;
  const torch::Tensor x = fp32.contiguous();
  const torch::Tensor bits = x.view(torch::kInt32);
  // torchao's rule: up when r < f, i.e. add 0xFFFF - r (kernels/bf16_bits.h).
  const torch::Tensor noise = 0xFFFF - random16.reshape(x.sizes());
  // Adding to the two's-complement pattern grows the magnitude for either
  // sign. Finite patterns are <= 0x7F7FFFFF in magnitude, so no overflow.
  const torch::Tensor truncated = (bits + noise).bitwise_and_(static_cast<int32_t>(0xFFFF0000u));
  // The low 16 bits are zero now, so the bf16 conversion below is exact.
  const torch::Tensor rounded = torch::where(torch::isfinite(x), truncated.view(torch::kFloat32), x);
  return rounded.to(torch::kBFloat16);
}

torch::Tensor philoxRandom16(int64_t numel, const kernels::RandomStream& stream, const torch::Device& device) {
  torch::Tensor out = torch::empty({numel}, torch::kInt32);
  int32_t* bits = out.data_ptr<int32_t>();
  kernels::Philox4 group{};
  for (int64_t i = 0; i < numel; ++i) {
    const auto index = static_cast<uint64_t>(i);
    if ((index & 7u) == 0) group = kernels::randomGroup(stream, index >> 3);
    bits[i] = static_cast<int32_t>(kernels::random16Of(group, index));
  }
  return out.to(device);
}

KahanWrite kahanBf16Write(const torch::Tensor& before, const torch::Tensor& comp, const torch::Tensor& update) {
  const torch::Tensor total = comp + update;
  const torch::Tensor written = (before + total).to(torch::kBFloat16);
  return {written, total - (written.to(torch::kFloat32) - before)};
}

torch::Tensor bf16Ulp(const torch::Tensor& values) {
  return torch::ldexp(torch::ones_like(values), std::get<1>(torch::frexp(values)) - 8).mul_(values != 0);
}

}  // namespace plab
