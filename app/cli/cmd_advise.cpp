// precision-lab-cli advise: the precision advisor (core/advisor/advisor.h).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "advisor/advice_report.h"
#include "advisor/advisor.h"
#include "cli_support.h"
#include "util/errors.h"
#include "train/run_config_file.h"
#include "train/run_config_model_check.h"
#include "util/run_folder.h"

namespace plab::cli {
namespace {

namespace fs = std::filesystem;

std::atomic<bool> gAdviseStop{false};
extern "C" void onAdviseSigint(int) { gAdviseStop = true; }  // lock-free atomic store: signal-safe

// "1-3" or "1,2,7": the same rules as run's --seeds (no seed twice), at most 20.
std::vector<uint64_t> parseSeeds(const std::string& text) {
  const auto seeds = parseSeedList(text, 20, "--seeds");
  return std::vector<uint64_t>(seeds.begin(), seeds.end());
}

// "none", or format ids separated by commas (bf16 is the baseline, not a candidate).
std::vector<GemmFormat> parseGemmFormats(const std::string& list) {
  std::vector<GemmFormat> formats;
  if (list == "none") return formats;
  std::stringstream in(list);
  for (std::string id; std::getline(in, id, ',');) {
    GemmFormat f;
    try {
      f = gemmFormatFromId(id);
    } catch (const ConfigError& e) {
      throw UsageError(std::string("--gemm-formats: ") + e.what());
    }
    if (f == GemmFormat::Bf16) throw UsageError("--gemm-formats: bf16 is what the plans already run; list the others");
    if (std::find(formats.begin(), formats.end(), f) != formats.end())
      throw UsageError("--gemm-formats: '" + id + "' given twice");
    formats.push_back(f);
  }
  if (formats.empty()) throw UsageError("--gemm-formats: no format given (or 'none')");
  return formats;
}

// "none", or quantized moment store ids separated by commas.
std::vector<MomentPrecision> parseMomentStores(const std::string& list) {
  std::vector<MomentPrecision> stores;
  if (list == "none") return stores;
  std::stringstream in(list);
  for (std::string id; std::getline(in, id, ',');) {
    MomentPrecision p;
    try {
      p = momentPrecisionFromId(id);
    } catch (const ConfigError& e) {
      throw UsageError(std::string("--moment-stores: ") + e.what());
    }
    if (!momentsQuantized(p)) throw UsageError("--moment-stores: '" + id + "' is not a quantized store (8bit, 4bit, fp8)");
    if (std::find(stores.begin(), stores.end(), p) != stores.end())
      throw UsageError("--moment-stores: '" + id + "' given twice");
    stores.push_back(p);
  }
  if (stores.empty()) throw UsageError("--moment-stores: no store given (or 'none')");
  return stores;
}

}  // namespace

const char* const kAdviseHelp =
    "usage: precision-lab-cli advise [CONFIG.json | --default] --out DIR [--steps N] [--seeds LIST]\n"
    "                                [--tolerance NATS] [--gemm-formats LIST|none]\n"
    "                                [--moment-stores LIST|none] [--overwrite]\n"
    "\n"
    "Finds the cheapest precision plan whose final validation loss stays within a\n"
    "tolerance of fp32's, by measurement:\n"
    "  1. one fp32 run that also measures per layer, in shadow, what a bf16 nearest,\n"
    "     stochastic-rounding and Kahan write would lose of each update (update lost);\n"
    "  2. candidate plans from least to most state memory: each write over every\n"
    "     layer, and each with fp32 for the layers its shadow write loses > 10, 50 or\n"
    "     90 % of;\n"
    "  3. every candidate and fp32 trained for the same steps on the same batches per\n"
    "     seed; the cheapest whose mean paired loss gap is within the tolerance wins;\n"
    "  4. that plan with its moments in each quantized store (8bit, 4bit, fp8),\n"
    "     cheapest first, confirmed the same way until one is within the tolerance;\n"
    "     a store over it is then tried on the half of its layers with the smallest\n"
    "     measured moment error (plan.moments), confirmed the same way unless a\n"
    "     store within the tolerance is cheaper: a store enters the plan only when\n"
    "     within it; each verdict and its figures are logged and in advice.json\n"
    "     (moment_stores);\n"
    "  5. the chosen plan with every matrix product in each GEMM format (simulated),\n"
    "     measured in shadow in step 1 and confirmed like the candidates; the fewest\n"
    "     bits per element within the tolerance is suggested (DIR/plan-gemm.json).\n"
    "\n"
    "  CONFIG.json    one run config (its model, data, lr, batch; mode and plan are replaced)\n"
    "  --default      the default experiment's run (embedded tiny GPT-2 fine-tune)\n"
    "  --out DIR      writes DIR/plan.json (the chosen plan: `precision-lab-cli run\n"
    "                 DIR/plan.json` runs it), DIR/advice.json (tolerance, chosen, candidates\n"
    "                 with memory_saved and loss_vs_fp32, per-layer shadow figures),\n"
    "                 DIR/report.html (frontier chart, shadow table, confirmation runs)\n"
    "                 and DIR/runs/ (every run's folder)\n"
    "  --steps N      steps per run (default: the config's)\n"
    "  --seeds LIST   confirmation seeds, \"1-3\" (default) or \"1,2,7\"\n"
    "  --tolerance X  in nats (default: max(0.005, 2 x the fp32 runs' seed-to-seed spread,\n"
    "                 max - min of their final validation losses))\n"
    "  --gemm-formats LIST  GEMM formats to measure and try, comma-separated (default\n"
    "                 fp8-e4m3,mxfp8,mxfp4,nvfp4), or none\n"
    "  --moment-stores LIST  quantized moment stores to try on the chosen plan,\n"
    "                 comma-separated (default 8bit,4bit,fp8), or none\n"
    "  --overwrite    replace the results of an earlier advice in DIR\n"
    "Progress goes to stderr. Exit codes: 0 a plan was chosen, 1 none within tolerance or\n"
    "a run failed, 2 usage or config error, 130 interrupted.\n";

int adviseCommand(Args& args) {
  if (args.wantsHelp()) {
    std::cout << kAdviseHelp;
    return kOk;
  }
  const bool useDefault = args.flag("--default");
  const auto out = args.value("--out");
  const auto steps = args.intValue("--steps", 1);
  const auto seedList = args.value("--seeds");
  const auto tolerance = args.value("--tolerance");
  const auto gemmList = args.value("--gemm-formats");
  const auto momentList = args.value("--moment-stores");
  const bool overwrite = args.flag("--overwrite");
  const std::vector<std::string> pos = args.positionals(1);
  if (useDefault == !pos.empty())
    throw UsageError(useDefault ? "give either CONFIG.json or --default, not both" : "missing CONFIG.json (or --default)");
  if (!out) throw UsageError("missing --out DIR");

  AdvisorOptions options;
  if (useDefault) {
    options.base = defaultRunConfig();
  } else {
    options.base = readRunConfigFile(pos[0]);
    // Read-time checks as `run` makes them: its plan is replaced, but a plan
    // that names no module of the model is a mistake in the file either way.
    checkRunConfigForModel(options.base);
  }
  if (steps) options.steps = *steps;
  if (seedList) options.seeds = parseSeeds(*seedList);
  if (gemmList) options.gemmFormats = parseGemmFormats(*gemmList);
  if (momentList) options.momentStores = parseMomentStores(*momentList);
  if (tolerance) {
    const std::optional<double> t = parseDecimal(*tolerance);  // "0x10" is not 16 nats
    if (!t || !(*t > 0) || !std::isfinite(*t))
      throw UsageError("--tolerance: '" + tolerance->substr(0, 40) + "' is not a positive number of nats (decimal)");
    options.tolerance = *t;
  }
  options.outDir = *out;
  // A folder with earlier results is refused unless --overwrite (its run
  // folders would otherwise be appended to); the lock keeps a second run out.
  const RunFolderLock folderLock(*out, overwrite);

  std::signal(SIGINT, onAdviseSigint);
  AdvisorCallbacks callbacks;
  callbacks.stop = &gAdviseStop;
  callbacks.onLog = [](const std::string& line) { std::cerr << line << '\n'; };
  callbacks.onProgress = [](int done, int total, const std::string& text) {
    std::cerr << "[" << done << "/" << total << "] " << text << '\n';
  };
  const Advice advice = runAdvisor(options, callbacks);
  std::signal(SIGINT, SIG_DFL);
  writeAdviceFiles(*out, advice, options.base);
  std::cerr << "wrote " << (fs::path(*out) / "advice.json").string() << ", plan.json, "
            << (advice.gemmChosen >= 0 ? "plan-gemm.json, " : "") << "report.html ("
            << std::fixed << std::setprecision(0) << advice.seconds << " s)\n";
  if (gAdviseStop) return kInterrupted;
  if (!advice.completed) {
    std::cerr << "error: " << advice.message << '\n';
    return kRunFailed;
  }
  return advice.chosen >= 0 ? kOk : kRunFailed;
}

}  // namespace plab::cli
