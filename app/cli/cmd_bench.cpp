// `precision-lab-cli bench`: throughput and memory of every optimizer mode
// on the built-in default model, beside what a plain PyTorch loop reaches on
// the same model, measured here and now (pytorch_loop_runner.h), each mode's
// run and its loop back to back in alternating order; or a figure the user
// names (--pytorch FILE), labelled as not measured in this run.
#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_support.h"
#include "precision/optimizer_mode.h"
#include "pytorch_loop_runner.h"
#include "train/torch_runtime.h"
#include "train/trainer.h"
#include "util/blas_info.h"
#include "util/errors.h"
#include "util/json_limits.h"
#include "util/resources.h"

namespace plab::cli {
namespace {

// Tokens/s of resources/bench/pytorch_loop.py --reference: fp32 AdamW, and naive bf16
// (model.to(torch.bfloat16)) for the bf16 modes.
struct PytorchReference {
  std::string recorded, source;
  long long batch = 0, seq = 0;
  double fp32 = 0, bf16 = 0;
};

PytorchReference readPytorchReference(const std::string& path) {
  PytorchReference r;
  // A few hundred bytes; anything else (a folder, a FIFO, a huge file) is not one.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec) || std::filesystem::file_size(path, ec) > (1 << 20) || ec)
    throw UsageError("--pytorch: '" + textExcerpt(path) + "' is not a small regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("--pytorch: cannot read '" + textExcerpt(path) + "'");
  std::ostringstream all;
  all << in.rdbuf();
  const std::string text = all.str();
  r.source = textExcerpt(path) + " (given with --pytorch: not measured in this run)";
  const std::string what = "--pytorch " + textExcerpt(path) + ": ";
  if (const std::string deep = jsonNestingProblem(text); !deep.empty()) throw UsageError(what + deep);
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) throw UsageError(what + "not a JSON object");
  const auto number = [&](const nlohmann::json& o, const char* key, const std::string& label) {
    if (!o.is_object() || !o.contains(key) || !o.at(key).is_number() || !(o.at(key).get<double>() > 0))
      throw UsageError(what + "expected a positive number at '" + label +
                       "' (write the file with resources/bench/pytorch_loop.py --reference)");
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

// CPU seconds this process has used, all threads.
double processCpuSeconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

std::string loadAverage() {
  double l[3] = {0, 0, 0};
  if (::getloadavg(l, 3) != 3) return "n/a";
  std::ostringstream o;
  o << std::fixed << std::setprecision(2) << l[0] << ' ' << l[1] << ' ' << l[2];
  return o.str();
}

}  // namespace

const char* const kBenchHelp =
    "usage: precision-lab-cli bench [--steps N] [--device D] [--model CONFIG.json] [--batch B] [--seq T]\n"
    "                               [--modes M1,M2] [--stats] [--torch-step S]\n"
    "                               [--python PY | --pytorch FILE | --no-pytorch]\n"
    "\n"
    "Trains the built-in default model (tiny GPT-2, default corpus, all-bf16\n"
    "plan) for N steps (default 20) in each optimizer mode and prints tokens/s,\n"
    "ms/step (first step excluded as warm-up), training-state memory and the\n"
    "measured peak of one step above the memory resident before it. Statistics\n"
    "run on step 1 only and the update-lost window is off: plain training speed.\n"
    "  --model CONFIG.json  a GPT-2 config.json instead (randomly initialised,\n"
    "                 byte tokenizer; bench/configs/gpt2-16m.json, gpt2-124m.json)\n"
    "  --batch B, --seq T   batch and sequence length (default 8 x 64)\n"
    "  --modes M1,M2  these modes only (ids as in run configs: fp32,bf16,...)\n"
    "  --stats        statistics at the default cadence (layer statistics every\n"
    "                 5 steps, the 20-step update-lost window): what a run pays\n"
    "  --torch-step S adamw.torch_step of every run (default, fused, for-loop):\n"
    "                 which of torch's AdamW paths fp32 and bf16 reproduce\n"
    "\n"
    "Beside each mode: a plain PyTorch loop on the same model, batch, sequence\n"
    "length and thread count, with torch.optim.AdamW(fused=True), torch's fastest\n"
    "correct AdamW (fp32 for fp32; model.to(torch.bfloat16) for the bf16 modes),\n"
    "and for bf16, bf16-kahan and bf16-sr also the loop that does the same job\n"
    "(torch's default for-loop AdamW, whose every operation rounds to bf16 as\n"
    "bf16's default step does; optimi's AdamW(kahan_sum=True); torchao's\n"
    "AdamW(bf16_stochastic_round=True)),\n"
    "measured in this run: resources/bench/pytorch_loop.py (carried in\n"
    "this binary) runs in a Python with torch right before or after each mode's\n"
    "run, the order alternating, so that the machine's load affects both alike.\n"
    "Ratios are given per wall-clock second and per CPU-second of each process,\n"
    "with the load average before and after.\n"
    "  --python PY    the Python to run it with (default: $PLAB_PYTHON, else the\n"
    "                 build's .venv, else python3)\n"
    "  --pytorch FILE compare with a figure from a file instead (written by\n"
    "                 pytorch_loop.py --reference; shown as not measured here)\n"
    "  --no-pytorch   no PyTorch comparison\n";

// A model config named with --model: a small regular file (hostile input).
std::string readModelConfigText(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec) || std::filesystem::file_size(path, ec) > (1 << 20) || ec)
    throw UsageError("--model: '" + textExcerpt(path) + "' is not a small regular file");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream all;
  all << in.rdbuf();
  if (!in && !in.eof()) throw UsageError("--model: cannot read '" + textExcerpt(path) + "'");
  const std::string text = all.str();
  if (const std::string deep = jsonNestingProblem(text); !deep.empty()) throw UsageError("--model: " + deep);
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) throw UsageError("--model: '" + textExcerpt(path) + "' is not a JSON object");
  return text;
}

std::vector<OptimizerMode> modesFrom(const std::optional<std::string>& list) {
  if (!list) return allOptimizerModes();
  std::vector<OptimizerMode> out;
  std::stringstream in(*list);
  std::string id;
  while (std::getline(in, id, ','))
    if (!id.empty()) {
      try {
        out.push_back(optimizerModeFromId(id));
      } catch (const ConfigError& e) {
        throw UsageError(std::string("--modes: ") + e.what());
      }
    }
  if (out.empty()) throw UsageError("--modes: no mode named");
  return out;
}

int benchCommand(Args& args) {
  if (args.wantsHelp()) {
    std::cout << kBenchHelp;
    return kOk;
  }
  const long long steps = args.intValue("--steps", 3).value_or(20);
  const std::string device = args.value("--device").value_or("auto");
  const std::optional<std::string> pytorchFile = args.value("--pytorch");
  const std::optional<std::string> pythonArg = args.value("--python");
  const bool noPytorch = args.flag("--no-pytorch");
  const std::optional<std::string> modelPath = args.value("--model");
  const std::optional<long long> batch = args.intValue("--batch", 1);
  const std::optional<long long> seq = args.intValue("--seq", 2);
  const std::vector<OptimizerMode> modes = modesFrom(args.value("--modes"));
  const bool withStats = args.flag("--stats");
  std::optional<TorchStep> torchStep;
  if (const std::optional<std::string> id = args.value("--torch-step")) {
    try {
      torchStep = torchStepFromId(*id);
    } catch (const ConfigError& e) {
      throw UsageError(std::string("--torch-step: ") + e.what());
    }
  }
  args.positionals(0);
  if (int(pytorchFile.has_value()) + int(pythonArg.has_value()) + int(noPytorch) > 1)
    throw UsageError("bench: give one of --python, --pytorch and --no-pytorch");
  const std::optional<PytorchReference> given =
      pytorchFile ? std::optional<PytorchReference>(readPytorchReference(*pytorchFile)) : std::nullopt;

  applyIntraOpThreads(0);  // as each run does
  const TorchRuntime runtime = describeTorchRuntime();
  std::cout << "LibTorch " << runtime.libtorchVersion << ", " << runtime.intraOpThreads << " intra-op threads, BLAS "
            << runtime.blas << (loadedBlas().slow ? "  -- the unoptimised reference: fp32 figures will be far too slow" : "")
            << ", CUDA kernels " << (runtime.cudaKernelsLinked ? "linked" : "not linked") << '\n'
            << "bf16 matrix products on the CPU before the runs: " << runtime.cpuBf16Gemm << '\n'
            << "load average before: " << loadAverage() << '\n';

  RunConfig base = defaultRunConfig();
  std::string loopConfig = std::string(embeddedResource("models/tiny-gpt2/config.json"));
  if (modelPath) {
    loopConfig = readModelConfigText(*modelPath);
    base.model.source = "config";
    base.model.path = std::filesystem::absolute(*modelPath).string();
    base.model.tokenizer = "bytes";
  }
  if (batch) base.batch_size = *batch;
  if (seq) base.seq_len = *seq;
  std::cout << "model " << (modelPath ? textExcerpt(*modelPath) : std::string("built-in tiny GPT-2")) << ", batch "
            << base.batch_size << " x " << base.seq_len << ", " << steps << " steps, statistics "
            << (withStats ? "at the default cadence (every " + std::to_string(base.layer_stats_every) +
                                " steps, window " + std::to_string(base.update_window) + ")"
                          : std::string("on step 1 only, no window"))
            << (torchStep ? ", adamw.torch_step " + torchStepId(*torchStep) : std::string()) << '\n';
  std::unique_ptr<PytorchLoopRunner> loop;
  if (given) {
    std::cout << "PyTorch loop: " << given->source << (given->recorded.empty() ? "" : "; " + given->recorded)
              << "; batch " << given->batch << " x " << given->seq << '\n';
    if (given->batch != base.batch_size || given->seq != base.seq_len)
      std::cout << "(the PyTorch figure is for batch " << given->batch << " x " << given->seq << ", this bench runs "
                << base.batch_size << " x " << base.seq_len << ")\n";
  } else if (!noPytorch) {
    loop = std::make_unique<PytorchLoopRunner>(pythonArg.value_or(defaultLoopPython()), loopConfig);
    std::cout << "PyTorch loop: measured in this run with " << loop->python() << " (pytorch_loop.py, AdamW fused=True, "
              << steps - 2 << " timed steps after 2 warm-up), before or after each mode's run, alternating\n";
  }
  std::cout << std::left << std::setw(30) << "mode" << std::right << std::setw(12) << "tokens/s" << std::setw(10)
            << "PyTorch" << std::setw(8) << "ratio" << std::setw(10) << "per CPU-s" << std::setw(10) << "ms/step"
            << std::setw(13) << "memory KiB" << std::setw(12) << "vs fp32" << std::setw(12) << "final loss"
            << std::setw(16) << "step peak KiB" << '\n';
  int exitCode = kOk;
  std::string loopProblem, loopTorch;
  std::set<std::string> gemmPaths;  // how the runs' bf16 products ran (chosen at each run's start)
  int index = 0;
  for (OptimizerMode mode : modes) {
    RunConfig c = base;
    c.name = "bench-" + optimizerModeId(mode);
    c.mode = mode;
    c.steps = steps;
    c.device = device;
    c.eval_every = 0;
    if (torchStep) c.adamw.torchStep = *torchStep;
    if (!withStats) {
      c.layer_stats_every = steps + 1;  // stats only on step 1: measure plain training speed
      c.update_window = 0;              // and no update-lost window
    }
    const std::string dtype = mode == OptimizerMode::Fp32AdamW ? "fp32" : "bf16";
    // The loop that does the mode's arithmetic, beside torch's fused AdamW: for
    // the two bf16 fixes their libraries' loops; for plain bf16, whose default
    // step is torch's for-loop form (every operation rounded to bf16), torch's
    // default AdamW, which runs that form on the CPU.
    const bool forLoopStep = !torchStepFused(c.adamw.torchStep, /*bf16Weights=*/dtype == "bf16");
    const std::string recipeLoop = mode == OptimizerMode::Bf16Kahan                ? "optimi-kahan"
                                   : mode == OptimizerMode::Bf16StochasticRounding ? "torchao-sr"
                                   : mode == OptimizerMode::Bf16Plain && forLoopStep ? "adamw"
                                                                                   : "";
    LoopFigure theirs, recipe;
    const auto runLoop = [&] {
      if (!loop) return;
      theirs = loop->run(dtype, "adamw-fused", c.batch_size, c.seq_len, steps - 2, runtime.intraOpThreads);
      if (!recipeLoop.empty())
        recipe = loop->run(dtype, recipeLoop, c.batch_size, c.seq_len, steps - 2, runtime.intraOpThreads);
    };
    const bool loopFirst = index++ % 2 == 1;  // A, B then B, A: a trend in the load touches both alike
    if (loopFirst) runLoop();

    Trainer trainer(c);
    std::vector<double> stepTokensPerSecond;
    double cpuAtFirst = 0, cpuAtLast = 0;
    Trainer::Callbacks cb;
    cb.onStep = [&](const StepMetrics& m) {
      if (m.step == 1) cpuAtFirst = processCpuSeconds();
      if (m.step > 1 && m.step < c.steps) {
        stepTokensPerSecond.push_back(m.tokensPerSecond);
        cpuAtLast = processCpuSeconds();
      }
    };
    int64_t tokensPerStep = 0;
    cb.onStart = [&](const RunInfo& info) {
      tokensPerStep = info.tokensPerStep;
      if (info.bf16ParameterCount > 0 && !info.cpuBf16Gemm.empty()) gemmPaths.insert(info.cpuBf16Gemm);
    };
    const RunResult r = trainer.run(cb);
    if (!loopFirst) runLoop();
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
    const double cpu = cpuAtLast - cpuAtFirst;
    const double oursPerCpu = cpu > 0 ? tokensPerStep * static_cast<double>(stepTokensPerSecond.size()) / cpu : 0;
    double reference = 0, referencePerCpu = 0;
    if (given) {
      reference = mode == OptimizerMode::Fp32AdamW ? given->fp32 : given->bf16;
    } else if (theirs.ok) {
      reference = theirs.tokensPerSecond;
      referencePerCpu = theirs.tokensPerCpuSecond;
      loopTorch = theirs.torch;
    } else if (loop && loopProblem.empty()) {
      loopProblem = theirs.problem;
    }
    const auto ratio = [](double a, double b) {
      std::ostringstream o;
      if (a > 0 && b > 0)
        o << std::fixed << std::setprecision(2) << a / b << 'x';
      else
        o << "n/a";
      return o.str();
    };
    std::cout << std::left << std::setw(30) << optimizerModeLabel(mode) << std::right << std::fixed
              << std::setprecision(0) << std::setw(12) << ours << std::setw(10)
              << (reference > 0 ? std::to_string(static_cast<long long>(reference)) : std::string("n/a"))
              << std::setw(8) << ratio(ours, reference) << std::setw(10) << ratio(oursPerCpu, referencePerCpu)
              << std::setprecision(2) << std::setw(10) << msPerStep << std::setprecision(1) << std::setw(13)
              << r.memory.total() / 1024.0 << std::setw(11) << 0.0 - 100 * r.memorySavedFraction << '%'
              << std::setprecision(4) << std::setw(12) << r.finalLoss << std::setprecision(0) << std::setw(16)
              << (r.stepPeakBytes ? std::to_string(*r.stepPeakBytes / 1024) : std::string("n/a")) << '\n';
    if (!recipeLoop.empty() && loop) {
      const std::string recipeLabel = recipeLoop == "adamw" ? "adamw (for-loop)" : recipeLoop;
      std::cout << std::left << std::setw(30) << ("  vs " + recipeLabel + " loop") << std::right << std::setw(12) << ""
                << std::setw(10)
                << (recipe.ok ? std::to_string(static_cast<long long>(recipe.tokensPerSecond)) : std::string("n/a"))
                << std::setw(8) << ratio(ours, recipe.ok ? recipe.tokensPerSecond : 0) << std::setw(10)
                << ratio(oursPerCpu, recipe.ok ? recipe.tokensPerCpuSecond : 0)
                << (recipe.ok ? "" : "  (" + textExcerpt(recipe.problem, 100) + ")") << '\n';
    }
    std::cout.unsetf(std::ios::fixed);
  }
  for (const std::string& g : gemmPaths) std::cout << "bf16 matrix products: " << g << '\n';
  if (!loopTorch.empty()) std::cout << "PyTorch loop ran with torch " << loopTorch << '\n';
  if (!loopProblem.empty())
    std::cout << "PyTorch loop not measured: " << loopProblem
              << "\n(--python PY names a Python with torch; --no-pytorch leaves the comparison out)\n";
  std::cout << "load average after: " << loadAverage() << '\n';
  return exitCode;
}

}  // namespace plab::cli
