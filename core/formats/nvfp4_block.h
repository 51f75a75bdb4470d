#pragma once
// One block of NVFP4: 16 e2m1 elements share an e4m3 scale, and the tensor
// has an fp32 scale, as torchao's reference computes it
// (prototype/mx_formats/nvfp4_tensor.py: nvfp4_quantize with the per-tensor
// scale per_tensor_amax_to_scale(max |x|) = amax / (448 * 6), the path of
// use_dynamic_per_tensor_scale; NVFP4Tensor.dequantize). Round to nearest
// even. Torch-free; the same code in the CPU loop and the CUDA kernel.
#include <cstdint>

#include "formats/fp4_element.h"
#include "formats/fp8_element.h"
#include "formats/minifloat_grid.h"

namespace plab::formats {

constexpr int kNvfp4Block = 16;
constexpr float kE4m3Smallest = 0x1p-6f;  // torch.finfo(float8_e4m3fn).tiny, torchao's floor for block scales

// amax / (448 * 6) in fp32. One deviation from torchao: a scale of 0 (an
// all-zero tensor, or amax below 2^-138) becomes 1, as torchao's Triton
// training kernel does; its reference divides the block scales by 0 and
// returns NaN for every element.
PLAB_HD float nvfp4TensorScale(float amax) {
  const float scale = amax / (kE4m3Max * kE2m1Max);
  return scale == 0.0f ? 1.0f : scale;
}

// The block's e4m3 scale code: (amax / 6) / tensorScale, clamped to
// [2^-6, 448] (NaN passes and becomes e4m3's NaN), cast to e4m3.
PLAB_HD uint8_t nvfp4BlockScale(float blockAmax, float tensorScale) {
  float s = (blockAmax / kE2m1Max) / tensorScale;
  s = s < kE4m3Smallest ? kE4m3Smallest : (s > kE4m3Max ? kE4m3Max : s);
  return e4m3FromFloat(s);
}

// torchao multiplies by a reciprocal (to match its Triton kernel):
// (1 / tensorScale) / blockScale.
PLAB_HD float nvfp4Reciprocal(uint8_t blockCode, float tensorScale) {
  return (1.0f / tensorScale) / e4m3ToFloat(blockCode);
}

// Dequantization multiplies by tensorScale * blockScale (get_hp_scales).
PLAB_HD float nvfp4Multiplier(uint8_t blockCode, float tensorScale) { return tensorScale * e4m3ToFloat(blockCode); }

PLAB_HD float nvfp4Element(float x, float reciprocal, float multiplier) {
  return e2m1Grid(x * reciprocal) * multiplier;
}

}  // namespace plab::formats
