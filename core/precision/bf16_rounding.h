#pragma once
// fp32 -> bf16 rounding as tensor ops, on whatever device the input is on.
// These are the reference semantics for any fused kernel.
#include <torch/torch.h>

#include <cstdint>

#include "precision/kernels/philox.h"

namespace plab {

// Round-to-nearest-even, identical to fp32.to(kBFloat16).
torch::Tensor roundToBf16Nearest(const torch::Tensor& fp32);

// Stochastic rounding with torchao's rule: rounds the magnitude up when the
// random number r is below the 16 bits f under the bf16 mantissa (adds
// 0xFFFF - r and truncates), so x rounds up to the next bf16 value with
// probability f / 2^16, its distance from the lower one (unbiased).
// NaN and +-Inf pass through. random16 holds the bits, one value in
// [0, 2^16) per element (int32, same number of elements, same device).
torch::Tensor roundToBf16Stochastic(const torch::Tensor& fp32, const torch::Tensor& random16);

// The Kahan-compensated write of `update` onto bf16 weights `before` (held
// in fp32) with the compensation buffer `comp` (fp32): the buffer joins the
// update, the sum is written rounded to nearest, and what that write loses
// goes back into the buffer. `written` is bf16; `compensation` fp32 (the
// caller stores it in its bf16 buffer).
struct KahanWrite {
  torch::Tensor written, compensation;
};
KahanWrite kahanBf16Write(const torch::Tensor& before, const torch::Tensor& comp, const torch::Tensor& update);

// The unit in the last place of bf16 values (8 significant bits) at each
// element's magnitude, in its dtype: 2^(e - 8) for |x| = m 2^e, 0.5 <= m < 1;
// 0 where x is 0 (an element at 0 moves by less than any ulp).
torch::Tensor bf16Ulp(const torch::Tensor& values);

// The 16-bit random numbers of `numel` elements of a Philox stream
// (precision/kernels/philox.h), as int32 on `device`: the bits the fused
// kernels use for the same stream, for the tensor-op reference.
torch::Tensor philoxRandom16(int64_t numel, const kernels::RandomStream& stream, const torch::Device& device);

}  // namespace plab
