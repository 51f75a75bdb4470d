// qlinear FORMAT IN.safetensors OUT.safetensors: the project's quantized
// linear layer (model/quantized_linear.h) on "x" [N, in], "w" [out, in], "b"
// [out] and the output gradient "gy" [N, out] (all one dtype, fp32 or bf16:
// the layer's): writes its output "y" and the gradients "dx", "dw", "db".
#include "commands.h"
#include "model/quantized_linear.h"
#include "model/safetensors.h"

namespace plab::probe {

int qlinearCommand(const Args& args) {
  if (args.size() != 3) throw UsageError("qlinear FORMAT IN.safetensors OUT.safetensors");
  const GemmFormat format = gemmFormatFromId(args[0]);
  const SafetensorsFile in(args[1]);
  const torch::Tensor x = in.load("x").requires_grad_();
  const torch::Tensor w = in.load("w").requires_grad_();
  const torch::Tensor b = in.load("b").requires_grad_();
  const torch::Tensor y = quantizedLinear(x, w, b, format);
  y.backward(in.load("gy"));
  writeSafetensors(args[2], {{"y", y.detach()}, {"dx", x.grad()}, {"dw", w.grad()}, {"db", b.grad()}});
  return 0;
}

}  // namespace plab::probe
