// precision-lab-cli: headless runner of Precision Lab experiments.
#include <iostream>
#include <string>
#include <vector>

#include "cli_support.h"
#include "train/torch_runtime.h"
#include "util/errors.h"

namespace {

const char* const kTopHelp =
    "usage: precision-lab-cli <command> [options]\n"
    "\n"
    "Precision Lab: train causal LMs in pure bf16 with plain AdamW, Kahan-summed\n"
    "updates, stochastic rounding, fp32 master weights or fp32 (or fp16 with loss\n"
    "scaling, and simulated fp8 / MX GEMMs), and measure loss, memory and how much\n"
    "of the intended update low-precision rounding loses.\n"
    "\n"
    "commands:\n"
    "  run [CONFIG.json] [--default | --default-formats | --default-states] [--out DIR] [--overwrite] [--steps N]\n"
    "      [--mode ID] [--seeds LIST] [--nproc N] [--device D] [--no-pdf]\n"
    "                   train one run or a sweep and write a report (HTML, SVG, CSV, JSONL, PDF)\n"
    "  default-config   print the built-in default run config (JSON)\n"
    "  inspect MODEL    print a model's layer tree with parameter counts\n"
    "  cache            list models in the local Hugging Face cache\n"
    "  download REPO [--revision R]\n"
    "                   download a model from the Hugging Face Hub into the cache\n"
    "  bench [--steps N] [--device D]\n"
    "                   tokens/s, ms/step and memory of every optimizer mode\n"
    "  memory MODEL [--nproc N,...] [--plan PRESET] [--mode ID]\n"
    "                   training state per process on N processes, projected from the config\n"
    "  advise [CONFIG.json | --default] --out DIR [--steps N] [--seeds LIST] [--tolerance NATS]\n"
    "                   the cheapest precision plan within a tolerance of fp32's loss, by measurement\n"
    "\n"
    "optimizer modes: fp32, bf16, bf16-nearest, bf16-kahan, bf16-sr, mixed, fp16, fp16-mixed\n"
    "                 (docs/modes.md: the mode table; the default experiment runs the first six)\n"
    "`precision-lab-cli <command> --help` describes a command in detail.\n"
    "Exit codes: 0 ok, 1 run/command failed, 2 usage or config error, 130 interrupted.\n";

}  // namespace

int main(int argc, char** argv) {
  using namespace plab::cli;
  std::vector<std::string> rest(argv + 1, argv + argc);
  if (rest.empty()) {
    std::cerr << kTopHelp;
    return kUsage;
  }
  const std::string command = rest.front();
  rest.erase(rest.begin());
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << kTopHelp;
    return kOk;
  }
  if (command == "--version") {
    const plab::TorchRuntime runtime = plab::describeTorchRuntime();
    std::cout << "precision-lab-cli " << PLAB_VERSION << "\nLibTorch " << runtime.libtorchVersion << " (BLAS "
              << runtime.blas << "), CUDA kernels " << (runtime.cudaKernelsLinked ? "linked" : "not linked")
              << ", CUDA " << (runtime.cudaAvailable ? "available" : "not available") << '\n'
              << "CPU " << runtime.cpuModel << ": ATen " << runtime.cpuCapability << " kernels, "
              << runtime.intraOpThreads << " intra-op threads"
              << (runtime.mklReproducibility.empty() ? "" : ", MKL branch " + runtime.mklReproducibility) << ", "
              << runtime.libc << '\n';
    return kOk;
  }
  Args args(rest);
  try {
    if (command == "run") return runCommand(args);
    if (command == "default-config") return defaultConfigCommand(args);
    if (command == "inspect") return inspectCommand(args);
    if (command == "cache") return cacheCommand(args);
    if (command == "download") return downloadCommand(args);
    if (command == "bench") return benchCommand(args);
    if (command == "memory") return memoryCommand(args);
    if (command == "advise") return adviseCommand(args);
    throw UsageError("unknown command '" + command + "'");
  } catch (const UsageError& e) {
    const bool known = command == "run" || command == "default-config" || command == "inspect" ||
                       command == "cache" || command == "download" || command == "bench" || command == "memory" ||
                       command == "advise";
    std::cerr << "error: " << e.what() << "\n(see precision-lab-cli " << (known ? command + " " : "") << "--help)\n";
    return kUsage;
  } catch (const plab::ConfigError& e) {
    std::cerr << "error: " << e.what() << '\n';
    return kUsage;
  } catch (const std::exception& e) {
    std::string msg = e.what();
    const auto nl = msg.find('\n');  // LibTorch appends a backtrace
    std::cerr << "error: " << (nl == std::string::npos ? msg : msg.substr(0, nl)) << '\n';
    return kRunFailed;
  }
}
