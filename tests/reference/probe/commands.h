#pragma once
// plab_reference_probe's subcommands: each runs one piece of the project's
// own code on inputs a reference test wrote and writes what it computed.
// Torch-free, so that every source can include it.
#include <stdexcept>
#include <string>
#include <vector>

namespace plab::probe {

using Args = std::vector<std::string>;

// A wrong command line (exit code 2).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

int logitsCommand(const Args& args);   // logits MODEL_DIR IDS.json PLAN OUT.safetensors
int saveCommand(const Args& args);     // save MODEL_DIR OUT_DIR [PLAN]
int encodeCommand(const Args& args);   // encode TOKENIZER_DIR CASES.json OUT.json
int adamwCommand(const Args& args);    // adamw MODE STEPS PARAMS_GRADS.safetensors HYPER.json OUT.safetensors
int srRoundCommand(const Args& args);  // sr-round IN.safetensors OUT.safetensors
int quantizeCommand(const Args& args);  // quantize FORMAT ROLE IN.safetensors OUT.safetensors
int qlinearCommand(const Args& args);   // qlinear FORMAT IN.safetensors OUT.safetensors
int gradScalerCommand(const Args& args);  // grad-scaler CASE.json GRADS.safetensors OUT.safetensors
int trainCommand(const Args& args);       // train RUN.json DUMP_DIR
int readSafetensorsCommand(const Args& args);  // read-safetensors FILE
int configCommand(const Args& args);      // config MODEL_DIR OUT.json

}  // namespace plab::probe
