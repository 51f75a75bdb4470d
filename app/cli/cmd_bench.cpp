// `precision-lab-cli bench`: throughput and memory of every optimizer mode
// on the built-in default model.
#include <algorithm>
#include <iomanip>
#include <iostream>

#include "cli_support.h"
#include "train/trainer.h"
#include "util/blas_info.h"

namespace plab::cli {

const char* const kBenchHelp =
    "usage: precision-lab-cli bench [--steps N] [--device D]\n"
    "\n"
    "Trains the built-in default model (tiny GPT-2, default corpus, linear-bf16\n"
    "plan) for N steps (default 20) in each optimizer mode and prints tokens/s,\n"
    "ms/step (first step excluded as warm-up), training-state memory and the\n"
    "measured peak of one step above the memory resident before it.\n";

int benchCommand(Args& args) {
  if (args.wantsHelp()) {
    std::cout << kBenchHelp;
    return kOk;
  }
  const long long steps = args.intValue("--steps", 2).value_or(20);
  const std::string device = args.value("--device").value_or("auto");
  args.positionals(0);

  const BlasInfo blas = loadedBlas();
  std::cout << "BLAS: " << blas.name << (blas.library.empty() ? "" : " (" + blas.library + ")")
            << (blas.slow ? "  -- the unoptimised reference: fp32 figures will be far too slow" : "") << '\n';
  std::cout << std::left << std::setw(30) << "mode" << std::right << std::setw(12) << "tokens/s" << std::setw(10)
            << "ms/step" << std::setw(13) << "memory KiB" << std::setw(12) << "vs fp32" << std::setw(12)
            << "final loss" << std::setw(16) << "step peak KiB" << '\n';
  int exitCode = kOk;
  for (OptimizerMode mode : allOptimizerModes()) {
    RunConfig c = defaultRunConfig();
    c.name = "bench-" + optimizerModeId(mode);
    c.mode = mode;
    c.steps = steps;
    c.device = device;
    c.eval_every = 0;
    c.layer_stats_every = steps + 1;  // stats only on step 1: measure plain training speed
    c.update_window = 0;              // and no update-lost window
    Trainer trainer(c);
    std::vector<double> stepTokensPerSecond;
    Trainer::Callbacks cb;
    cb.onStep = [&](const StepMetrics& m) {
      if (m.step > 1 && m.step < c.steps) stepTokensPerSecond.push_back(m.tokensPerSecond);
    };
    int64_t tokensPerStep = 0;
    cb.onStart = [&](const RunInfo& info) { tokensPerStep = info.tokensPerStep; };
    const RunResult r = trainer.run(cb);
    if (r.status != RunStatus::Completed) {
      std::cout << std::left << std::setw(30) << optimizerModeLabel(mode) << "failed: " << r.message << '\n';
      exitCode = kRunFailed;
      continue;
    }
    // Mean step time over the timed steps (last step excluded: it evaluates).
    double seconds = 0;
    for (double tps : stepTokensPerSecond) seconds += tps > 0 ? tokensPerStep / tps : 0;
    const double n = std::max<size_t>(1, stepTokensPerSecond.size());
    const double msPerStep = 1000.0 * seconds / n;
    std::cout << std::left << std::setw(30) << optimizerModeLabel(mode) << std::right << std::fixed
              << std::setprecision(0) << std::setw(12) << (msPerStep > 0 ? tokensPerStep / (msPerStep / 1000.0) : 0)
              << std::setprecision(2) << std::setw(10) << msPerStep << std::setprecision(1) << std::setw(13)
              << r.memory.total() / 1024.0 << std::setw(11) << 0.0 - 100 * r.memorySavedFraction << '%'
              << std::setprecision(4) << std::setw(12) << r.finalLoss << std::setprecision(0) << std::setw(16)
              << (r.stepPeakBytes ? std::to_string(*r.stepPeakBytes / 1024) : std::string("n/a")) << '\n';
    std::cout.unsetf(std::ios::fixed);
  }
  return exitCode;
}

}  // namespace plab::cli
