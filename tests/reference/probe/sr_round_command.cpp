// sr-round IN.safetensors OUT.safetensors: the project's stochastic rounding
// of "x" (fp32) with the 16-bit random numbers "r" (int32 in [0, 2^16), one
// per element), by the fused kernels' element function
// (kernels::bf16Stochastic) -> "element" and by the tensor-op reference
// (roundToBf16Stochastic) -> "tensor_op", both bf16.
#include "commands.h"
#include "model/safetensors.h"
#include "precision/bf16_rounding.h"
#include "precision/kernels/bf16_bits.h"

namespace plab::probe {

int srRoundCommand(const Args& args) {
  if (args.size() != 2) throw UsageError("sr-round IN.safetensors OUT.safetensors");
  const SafetensorsFile in(args[0]);
  const torch::Tensor x = in.load("x").contiguous();
  const torch::Tensor r = in.load("r").contiguous();
  if (x.scalar_type() != torch::kFloat32 || r.scalar_type() != torch::kInt32 || x.numel() != r.numel())
    throw std::runtime_error(args[0] + ": expected x (F32) and r (I32) of the same size");
  torch::Tensor bits = torch::empty({x.numel()}, torch::kInt16);
  const float* xp = x.data_ptr<float>();
  const int32_t* rp = r.data_ptr<int32_t>();
  auto* out = reinterpret_cast<uint16_t*>(bits.data_ptr<int16_t>());
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (rp[i] < 0 || rp[i] > 0xFFFF) throw std::runtime_error("r[" + std::to_string(i) + "] is not 16 bits");
    out[i] = kernels::bf16Stochastic(xp[i], static_cast<uint32_t>(rp[i]));
  }
  const torch::Tensor element = bits.view(torch::kBFloat16).view(x.sizes());
  const torch::Tensor tensorOp = roundToBf16Stochastic(x, r).contiguous();
  writeSafetensors(args[1], {{"element", element}, {"tensor_op", tensorOp}});
  return 0;
}

}  // namespace plab::probe
