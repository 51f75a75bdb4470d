// plab_reference_probe: the project's side of the reference tests
// (tests/reference/*.py). Usage: plab_reference_probe COMMAND ARGS...
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <iostream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

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
    "      whether config.json is accepted (the model built from it), the error, the warnings\n"
    "  serve\n"
    "      one command per line of stdin (a JSON array: the command and its arguments), each\n"
    "      answered with one line of stdout: {\"rc\", \"stdout\", \"stderr\"}\n";

using Command = int (*)(const plab::probe::Args&);

int runCommand(const std::map<std::string, Command>& commands, const std::string& name,
               const plab::probe::Args& args) {
  using namespace plab::probe;
  const auto command = commands.find(name);
  if (command == commands.end()) {
    std::fprintf(stderr, "unknown command '%s'\n%s", name.c_str(), kUsage);
    return 2;
  }
  try {
    return command->second(args);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "usage: plab_reference_probe %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "plab_reference_probe %s: %s\n", name.c_str(), e.what());
    return 1;
  }
}

void flushAll() {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(stdout);
  std::fflush(stderr);
}

std::string readBack(std::FILE* f) {
  std::string text;
  std::rewind(f);
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, f)) > 0;) text.append(buffer, n);
  return text;
}

// Runs one command with its stdout and stderr caught in anonymous temporary
// files, as a process of its own would have written them.
nlohmann::json servedCommand(const std::map<std::string, Command>& commands, const plab::probe::Args& request) {
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  if (!out || !err) return {{"rc", 1}, {"stdout", ""}, {"stderr", "plab_reference_probe serve: no temporary file"}};
  flushAll();
  const int savedOut = dup(STDOUT_FILENO), savedErr = dup(STDERR_FILENO);
  dup2(fileno(out), STDOUT_FILENO);
  dup2(fileno(err), STDERR_FILENO);
  const int rc = runCommand(commands, request.front(), plab::probe::Args(request.begin() + 1, request.end()));
  flushAll();
  dup2(savedOut, STDOUT_FILENO);
  dup2(savedErr, STDERR_FILENO);
  close(savedOut);
  close(savedErr);
  nlohmann::json answer = {{"rc", rc}, {"stdout", readBack(out)}, {"stderr", readBack(err)}};
  std::fclose(out);
  std::fclose(err);
  return answer;
}

// The reference tests run hundreds of short commands (reference_config_rules
// 174): starting the probe, LibTorch's libraries and all, cost 0.25 s of CPU
// each, most of such a test. Commands that keep no state between calls run
// here one after another in one process (reference_common.py says which).
int serve(const std::map<std::string, Command>& commands) {
  for (std::string line; std::getline(std::cin, line);) {
    const nlohmann::json request = nlohmann::json::parse(line, nullptr, false);
    nlohmann::json answer;
    if (!request.is_array() || request.empty() || !std::all_of(request.begin(), request.end(), [](const auto& a) {
          return a.is_string();
        }))
      answer = {{"rc", 2}, {"stdout", ""}, {"stderr", "serve: each line is a JSON array of strings\n"}};
    else
      answer = servedCommand(commands, request.get<plab::probe::Args>());
    std::cout << answer.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n' << std::flush;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace plab::probe;
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::map<std::string, Command> commands = {
      {"logits", logitsCommand}, {"save", saveCommand},      {"encode", encodeCommand},
      {"adamw", adamwCommand},   {"sr-round", srRoundCommand}, {"quantize", quantizeCommand},
      {"qlinear", qlinearCommand},
      {"grad-scaler", gradScalerCommand}, {"train", trainCommand}, {"read-safetensors", readSafetensorsCommand},
      {"config", configCommand}};
  if (std::string(argv[1]) == "serve") return serve(commands);
  return runCommand(commands, argv[1], Args(argv + 2, argv + argc));
}
