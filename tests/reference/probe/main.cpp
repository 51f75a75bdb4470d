// plab_reference_probe: the project's side of the reference tests
// (tests/reference/*.py). Usage: plab_reference_probe COMMAND ARGS...
#include <cstdio>
#include <exception>
#include <map>
#include <string>

#include "commands.h"

namespace {

const char* kUsage =
    "usage: plab_reference_probe COMMAND ARGS...\n"
    "  logits MODEL_DIR IDS.json PLAN OUT.safetensors\n"
    "      the project's forward (PLAN: fp32, all-fp32, linear-bf16, all-bf16); logits as fp32\n"
    "  save MODEL_DIR OUT_DIR [PLAN]\n"
    "      load the folder (plan applied when given) and write it with the checkpoint writer\n"
    "  encode TOKENIZER_DIR CASES.json OUT.json\n"
    "      ids of each text: bare, with the special tokens, and as a training document is streamed\n"
    "  adamw MODE STEPS PARAMS_GRADS.safetensors HYPER.json OUT.safetensors\n"
    "      PrecisionAdamW in MODE (or 'libtorch': torch::optim::AdamW) over STEPS steps\n"
    "  sr-round IN.safetensors OUT.safetensors\n"
    "      stochastic rounding of x (fp32) with the given 16-bit random numbers r\n"
    "  quantize FORMAT ROLE IN.safetensors OUT.safetensors\n"
    "      fake quantization of x in a GEMM format (ROLE: input, weight, grad-output)\n"
    "  qlinear FORMAT IN.safetensors OUT.safetensors\n"
    "      the quantized linear layer's output and gradients on x, w, b and gy\n"
    "  grad-scaler CASE.json GRADS.safetensors OUT.safetensors\n"
    "      DynamicLossScale over a sequence of steps, as a training step calls GradScaler\n"
    "  train RUN.json DUMP_DIR\n"
    "      a Trainer run; fp16-mixed writes each step's scaled and unscaled gradients to DUMP_DIR\n"
    "  read-safetensors FILE\n"
    "      the project's safetensors reader on FILE: \"ok N\", or \"refused: ...\" and exit 3\n"

    "  config MODEL_DIR OUT.json\n"
    "      whether config.json is accepted (the model built from it), the error, the warnings\n";

}  // namespace

int main(int argc, char** argv) {
  using namespace plab::probe;
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::map<std::string, int (*)(const Args&)> commands = {
      {"logits", logitsCommand}, {"save", saveCommand},      {"encode", encodeCommand},
      {"adamw", adamwCommand},   {"sr-round", srRoundCommand}, {"quantize", quantizeCommand},
      {"qlinear", qlinearCommand},
      {"grad-scaler", gradScalerCommand}, {"train", trainCommand}, {"read-safetensors", readSafetensorsCommand},
      {"config", configCommand}};
  const auto command = commands.find(argv[1]);
  if (command == commands.end()) {
    std::fprintf(stderr, "unknown command '%s'\n%s", argv[1], kUsage);
    return 2;
  }
  try {
    return command->second(Args(argv + 2, argv + argc));
  } catch (const UsageError& e) {
    std::fprintf(stderr, "usage: plab_reference_probe %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "plab_reference_probe %s: %s\n", argv[1], e.what());
    return 1;
  }
}
