// quantize FORMAT ROLE IN.safetensors OUT.safetensors: the project's fake
// quantization (formats/gemm_format.h) of "x" (fp32 or bf16, any shape, the
// blocks along its last dimension) -> "values" (fp32), "scales" (uint8
// block scale codes; block formats only) and "tensor_scale" (fp32, one).
// ROLE: input, weight or grad-output.
#include "commands.h"
#include "formats/gemm_format.h"
#include "model/safetensors.h"

namespace plab::probe {

int quantizeCommand(const Args& args) {
  if (args.size() != 4) throw UsageError("quantize FORMAT ROLE IN.safetensors OUT.safetensors");
  const GemmFormat format = gemmFormatFromId(args[0]);
  GemmRole role;
  if (args[1] == "input") role = GemmRole::Input;
  else if (args[1] == "weight") role = GemmRole::Weight;
  else if (args[1] == "grad-output") role = GemmRole::GradOutput;
  else throw UsageError("quantize FORMAT ROLE IN OUT (ROLE: input, weight, grad-output)");
  const SafetensorsFile in(args[2]);
  const QuantizedTensor q = quantizeDequantize(in.load("x"), format, role);
  std::vector<std::pair<std::string, torch::Tensor>> out = {{"values", q.values},
                                                            {"tensor_scale", q.tensorScale.reshape({1})}};
  if (q.blockScales.defined()) out.emplace_back("scales", q.blockScales);
  writeSafetensors(args[3], out);
  return 0;
}

}  // namespace plab::probe
