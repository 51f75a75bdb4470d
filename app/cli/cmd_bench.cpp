// `precision-lab-cli bench`: throughput and memory of every optimizer mode
// on the built-in default model, beside what a plain PyTorch loop reaches on
// the same model (a recorded figure, or the user's own).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_support.h"
#include "train/torch_runtime.h"
#include "train/trainer.h"
#include "util/blas_info.h"
#include "util/json_limits.h"
#include "util/resources.h"

namespace plab::cli {
namespace {

// Tokens/s of bench/pytorch_loop.py --reference: fp32 AdamW, and naive bf16
// (model.to(torch.bfloat16)) for the bf16 modes.
struct PytorchReference {
  std::string recorded, source;
  long long batch = 0, seq = 0;
  double fp32 = 0, bf16 = 0;
};

PytorchReference readPytorchReference(const std::optional<std::string>& path) {
  std::string text;
  PytorchReference r;
  if (path) {
    // A few hundred bytes; anything else (a folder, a FIFO, a huge file) is not one.
    std::error_code ec;
    if (!std::filesystem::is_regular_file(*path, ec) || std::filesystem::file_size(*path, ec) > (1 << 20) || ec)
      throw UsageError("--pytorch: '" + textExcerpt(*path) + "' is not a small regular file");
    std::ifstream in(*path, std::ios::binary);
    if (!in) throw UsageError("--pytorch: cannot read '" + textExcerpt(*path) + "'");
    std::ostringstream all;
    all << in.rdbuf();
    text = all.str();
    r.source = textExcerpt(*path);
  } else {
    text = std::string(embeddedResource("bench/pytorch-loop.json"));
    r.source = "recorded with the build (resources/bench/pytorch-loop.json)";
  }
  const std::string what = "--pytorch " + (path ? textExcerpt(*path) : std::string("(built-in)")) + ": ";
  if (const std::string deep = jsonNestingProblem(text); !deep.empty()) throw UsageError(what + deep);
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) throw UsageError(what + "not a JSON object");
  const auto number = [&](const nlohmann::json& o, const char* key, const std::string& label) {
    if (!o.is_object() || !o.contains(key) || !o.at(key).is_number() || !(o.at(key).get<double>() > 0))
      throw UsageError(what + "expected a positive number at '" + label +
                       "' (write the file with bench/pytorch_loop.py --reference)");
    return o.at(key).get<double>();
  };
  static const nlohmann::json none;
  const nlohmann::json& figures = j.contains("tokens_per_second") ? j.at("tokens_per_second") : none;
  r.fp32 = number(figures, "fp32", "tokens_per_second.fp32");
  r.bf16 = number(figures, "bf16", "tokens_per_second.bf16");
  r.batch = static_cast<long long>(number(j, "batch_size", "batch_size"));
  r.seq = static_cast<long long>(number(j, "seq_len", "seq_len"));
  if (j.contains("recorded") && j.at("recorded").is_string()) r.recorded = textExcerpt(j.at("recorded").get<std::string>(), 120);
  return r;
}

}  // namespace

const char* const kBenchHelp =
    "usage: precision-lab-cli bench [--steps N] [--device D] [--pytorch FILE]\n"
    "\n"
    "Trains the built-in default model (tiny GPT-2, default corpus, all-bf16\n"
    "plan) for N steps (default 20) in each optimizer mode and prints tokens/s,\n"
    "ms/step (first step excluded as warm-up), training-state memory and the\n"
    "measured peak of one step above the memory resident before it. Statistics\n"
    "run on step 1 only and the update-lost window is off: plain training speed\n"
    "(bench/compare_pytorch_loop.sh measures runs with their statistics).\n"
    "\n"
    "Beside tokens/s: a plain PyTorch loop on the same model, batch and sequence\n"
    "length (fp32 AdamW for fp32; model.to(torch.bfloat16) for the bf16 modes).\n"
    "The figure recorded with the build is from the build machine; measure your\n"
    "own with\n"
    "  python3 bench/pytorch_loop.py resources/models/tiny-gpt2/config.json \\\n"
    "      --reference --batch 8 --seq 64 --steps 40 > pytorch-loop.json\n"
    "and pass --pytorch pytorch-loop.json.\n";

int benchCommand(Args& args) {
  if (args.wantsHelp()) {
    std::cout << kBenchHelp;
    return kOk;
  }
  const long long steps = args.intValue("--steps", 2).value_or(20);
  const std::string device = args.value("--device").value_or("auto");
  const PytorchReference pytorch = readPytorchReference(args.value("--pytorch"));
  args.positionals(0);

  applyIntraOpThreads(0);  // as each run does
  const TorchRuntime runtime = describeTorchRuntime();
  std::cout << "LibTorch " << runtime.libtorchVersion << ", " << runtime.intraOpThreads << " intra-op threads, BLAS "
            << runtime.blas << (loadedBlas().slow ? "  -- the unoptimised reference: fp32 figures will be far too slow" : "")
            << ", CUDA kernels " << (runtime.cudaKernelsLinked ? "linked" : "not linked") << '\n'
            << "bf16 matrix products on the CPU: " << runtime.cpuBf16Gemm << '\n';
  std::cout << "PyTorch loop: " << pytorch.source << (pytorch.recorded.empty() ? "" : "; " + pytorch.recorded)
            << "; batch " << pytorch.batch << " x " << pytorch.seq << '\n';
  std::cout << std::left << std::setw(30) << "mode" << std::right << std::setw(12) << "tokens/s" << std::setw(10)
            << "PyTorch" << std::setw(8) << "ratio" << std::setw(10) << "ms/step" << std::setw(13) << "memory KiB"
            << std::setw(12) << "vs fp32" << std::setw(12) << "final loss" << std::setw(16) << "step peak KiB" << '\n';
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
    if (mode == allOptimizerModes().front() && (pytorch.batch != c.batch_size || pytorch.seq != c.seq_len))
      std::cout << "(the PyTorch figure is for batch " << pytorch.batch << " x " << pytorch.seq << ", this bench runs "
                << c.batch_size << " x " << c.seq_len << ")\n";
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
    const double ours = msPerStep > 0 ? tokensPerStep / (msPerStep / 1000.0) : 0;
    const double theirs = mode == OptimizerMode::Fp32AdamW ? pytorch.fp32 : pytorch.bf16;
    std::cout << std::left << std::setw(30) << optimizerModeLabel(mode) << std::right << std::fixed
              << std::setprecision(0) << std::setw(12) << ours << std::setw(10) << theirs << std::setprecision(2)
              << std::setw(7) << ours / theirs << 'x' << std::setw(10) << msPerStep << std::setprecision(1) << std::setw(13)
              << r.memory.total() / 1024.0 << std::setw(11) << 0.0 - 100 * r.memorySavedFraction << '%'
              << std::setprecision(4) << std::setw(12) << r.finalLoss << std::setprecision(0) << std::setw(16)
              << (r.stepPeakBytes ? std::to_string(*r.stepPeakBytes / 1024) : std::string("n/a")) << '\n';
    std::cout.unsetf(std::ios::fixed);
  }
  return exitCode;
}

}  // namespace plab::cli
