// `precision-lab-cli run`: one run or a sweep, streamed to disk, then the
// report (HTML/SVG, plus PNG/PDF when built with Qt).
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include "cli_support.h"
#include "local_launcher.h"
#include "progress.h"
#include "qt_report_writer.h"
#include "distributed/world_info.h"
#include "report/fp32_comparison.h"
#include "report/gemm_format_verdict.h"
#include "report/report_charts.h"
#include "report/run_figures.h"
#include "report/run_report.h"
#include "train/gemm_format_experiment.h"
#include "train/run_config_file.h"
#include "train/run_config_model_check.h"
#include "train/states_experiment.h"
#include "train/torch_runtime.h"
#include "train/trainer.h"
#include "util/errors.h"
#include "util/json_limits.h"
#include "util/run_folder.h"
#include "util/workspace_folder.h"

namespace plab::cli {
namespace fs = std::filesystem;

namespace {

volatile std::sig_atomic_t gInterrupted = 0;
volatile std::sig_atomic_t gLauncherGone = 0;  // signal number, 0 while the --nproc launcher lives

void onSigint(int) {
  if (gInterrupted) std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C kills at once
  gInterrupted = 1;
}

// A rank of `run --nproc` whose launcher ended (its parent-death signal, or
// the launcher passing on the TERM it got): the rank stops at the next step
// and the run ends failed. Its stderr may be a pipe nobody reads any more.
extern "C" void onLauncherGone(int signal) {
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, nullptr);  // async-signal-safe, unlike signal()
  gLauncherGone = signal;
}

// Set by local_launcher.cpp in the ranks it starts; torchrun's ranks keep
// their default SIGHUP.
void watchForLauncher() {
  if (!std::getenv(kLaunchedRankEnv)) return;
  struct sigaction on {};
  on.sa_handler = onLauncherGone;
  ::sigaction(SIGHUP, &on, nullptr);
}

RunRecord trainOne(RunConfig config, const WorldInfo& world, bool terminal, bool& interrupted) {
  RunRecord record;
  Trainer trainer(config, world);
  ProgressPrinter progress(config.name, config.steps, terminal);
  Trainer::Callbacks cb;
  cb.onStart = [&](const RunInfo& info) { record.info = info; };
  cb.onStep = [&](const StepMetrics& m) {
    record.steps.push_back(m);
    if (world.writesOutputs()) progress.step(m);  // rank 0 speaks for the run
  };
  cb.onLog = [&](const std::string& line) {
    if (world.writesOutputs()) progress.log(line);
  };

  // The signal handler only sets a flag; this watcher turns it into stop().
  std::atomic<bool> done{false};
  std::thread watcher([&] {
    while (!done) {
      if (gLauncherGone) {
        trainer.abort("the run --nproc launcher that started this rank ended (signal " +
                      std::to_string(int(gLauncherGone)) + "): the ranks stopped");
        break;
      }
      if (gInterrupted) {
        trainer.stop();
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  record.result = trainer.run(cb);
  done = true;
  watcher.join();
  if (world.writesOutputs()) progress.finish();
  record.config = trainer.config();
  interrupted = gInterrupted != 0;
  return record;
}

// A rank other than 0 trains its rows and writes nothing: rank 0 reports.
int trainAsOtherRank(const RunConfig& config, const WorldInfo& world) {
  std::signal(SIGINT, onSigint);
  std::signal(SIGTERM, onSigint);  // torchrun stops the others with SIGTERM when one rank fails
  bool interrupted = false;
  const RunRecord r = trainOne(config, world, /*terminal=*/false, interrupted);
  std::signal(SIGINT, SIG_DFL);
  if (r.result.status == RunStatus::Failed) {
    std::cerr << "error: rank " << world.rank << ": run " << config.name << " failed: " << r.result.message << '\n';
    return r.result.configError ? kUsage : kRunFailed;
  }
  return interrupted ? kInterrupted : kOk;
}

// What a mode's checkpoint keeps beside the weights.
std::string optimizerStateText(OptimizerMode mode) {
  switch (mode) {
    case OptimizerMode::Bf16Kahan: return "moments and Kahan buffers";
    case OptimizerMode::Fp32MasterWeights: return "moments and fp32 master weights";
    case OptimizerMode::Fp16Mixed: return "moments, fp32 master weights and the loss scale";
    default: return "moments";
  }
}

// "1-5" or "1,2,7" (at most 100 seeds, each 0..2^63-1).
std::vector<uint64_t> parseSeedList(const std::string& text) {
  const auto seeds = plab::cli::parseSeedList(text, 100, "--seeds");
  return std::vector<uint64_t>(seeds.begin(), seeds.end());
}

// Every run once per seed, seed-major so that each seed's comparison (fp32
// and its twins) finishes together.
std::vector<RunConfig> overSeeds(const std::vector<RunConfig>& runs, const std::vector<uint64_t>& seeds) {
  if (runs.size() * seeds.size() > 1000) throw ConfigError("--seeds: more than 1000 runs in all");
  std::vector<RunConfig> out;
  for (uint64_t seed : seeds)
    for (RunConfig c : runs) {
      c.seed = seed;
      c.name += "-s" + std::to_string(seed);
      out.push_back(std::move(c));
    }
  return out;
}

// Right-aligned in `width` characters: "–" is one character of three bytes.
std::string alignRight(const std::string& text, size_t width) {
  size_t chars = 0;
  for (unsigned char c : text) chars += (c & 0xC0) != 0x80;
  return std::string(width > chars ? width - chars : 0, ' ') + text;
}

// The same texts as the app's table and the HTML and PDF reports
// (report/run_figures.h).
void printSummary(const std::vector<RunRecord>& runs) {
  size_t nameWidth = 4;
  for (const RunRecord& r : runs) nameWidth = std::max(nameWidth, r.config.name.size() + 2);
  const int nw = static_cast<int>(nameWidth);
  std::cout << std::left << std::setw(nw) << "run" << std::setw(14) << "mode" << std::setw(11) << "status"
            << std::right << std::setw(13) << "steps" << std::setw(11) << "loss" << std::setw(11) << "val loss"
            << std::setw(12) << "memory" << std::setw(13) << "state saved" << std::setw(25) << "measured peak saved"
            << std::setw(10) << "lost" << std::setw(10) << "rounded" << std::setw(10) << "tok/s" << '\n';
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunRecord& r = runs[i];
    const report::RunFigureTexts f = report::runFigureTexts(runs, i);
    std::cout << std::left << std::setw(nw) << r.config.name << std::setw(14) << optimizerModeId(r.config.mode)
              << std::setw(11) << f.status << alignRight(f.steps, 13) << alignRight(f.finalLoss, 11)
              << alignRight(f.finalValLoss, 11) << alignRight(f.memory, 12) << alignRight(f.stateSaved, 13)
              << alignRight(f.peakSaved, 25) << alignRight(f.updateLost, 10) << alignRight(f.roundedAway, 10)
              << alignRight(f.tokensPerSecond, 10) << '\n';
  }
  if (runs.size() < 2) return;
  std::cout << '\n';
  for (size_t i = 0; i < runs.size(); ++i) {
    std::cout << "  " << report::runLabel(runs, i) << ": " << report::comparisonVerdict(runs, i) << '\n';
  }
  // Runs with low-precision GEMMs: against the bf16-GEMM run of the same config and seed.
  const auto formats = report::gemmFormatVerdicts(runs);
  if (formats.empty()) return;
  std::cout << "\nGEMM formats:\n";
  for (const report::GemmFormatVerdict& v : formats) std::cout << "  " << v.label << ": " << v.text << '\n';
}

}  // namespace

const char* const kRunHelp =
    "usage: precision-lab-cli run [CONFIG.json] [--default | --default-formats | --default-states] [--out DIR] [--steps N] [--mode ID]\n"
    "                             [--device D] [--seeds LIST] [--no-pdf] [--overwrite] [--resume DIR]\n"
    "                             [--nproc N]\n"
    "\n"
    "Trains one run, or every run of a sweep file, and writes a report.\n"
    "\n"
    "  CONFIG.json    a run config (see `default-config`), {\"runs\": [...]}, or\n"
    "                 {\"base\": {...}, \"sweep\": {\"mode\": [\"fp32\", \"bf16\", ...]}}\n"
    "                 (sweepable: any field, e.g. \"mode\", \"seed\", \"adamw.lr\")\n"
    "  --default      the default experiment: fine-tune the embedded pretrained tiny GPT-2\n"
    "                 at lr 5e-5 under every optimizer mode, plus bf16-kahan and bf16-sr with\n"
    "                 fp32 moments, and compare them (with --mode, that mode alone);\n"
    "                 `default-config` prints its base run. With --seeds, each bf16 recipe's\n"
    "                 gap to fp32 is split into compute, weight write and moments\n"
    "  --default-formats  the same fine-tune (bf16 weights, bf16-kahan) with the GEMMs of\n"
    "                 every Linear/Conv1D and the tied head simulated in bf16, fp8-e4m3,\n"
    "                 mxfp8, mxfp4 and nvfp4, plus nvfp4 with the head kept bf16 (runs\n"
    "                 <name>-<format>, <name>-nvfp4-bf16-head); a verdict line per format:\n"
    "                 val loss minus the bf16 run's, paired over --seeds\n"
    "  --default-states  the same fine-tune with the optimizer's moments in each store:\n"
    "                 fp32 AdamW, bf16-sr with bf16-sr, 8bit, 4bit and fp8 moments (torchao's\n"
    "                 AdamW8bit / AdamW4bit / AdamWFp8 stores), bf16-kahan with 8bit moments\n"
    "                 (runs <name>-<mode>-<store>-moments); with --seeds each gap to fp32 is\n"
    "                 paired over the seeds, beside the state and peak memory each store saves\n"
    "  --out DIR      report folder (default: a new folder <name>-<UTC time>[-N] in the\n"
    "                 workspace the app lists, $PLAB_WORKSPACE or ~/.local/share/Precision Lab/\n"
    "                 Precision Lab/workspace); with several runs each gets DIR/runs/<name>/\n"
    "                 plus a comparison report in DIR. A folder that already holds\n"
    "                 files is refused, and a folder another run is writing is locked\n"
    "  --overwrite    replace the results of an earlier run in --out DIR\n"
    "  --resume DIR   continue a run from one of its checkpoint-N folders (checkpoint_every),\n"
    "                 bit for bit on CPU; steps N+1.. go to --out (or a new folder)\n"
    "  --steps N      override the number of optimizer steps\n"
    "  --mode ID      override the optimizer mode: fp32, bf16, bf16-nearest, bf16-kahan, bf16-sr, mixed,\n"
    "                 fp16 (model.half() + AdamW), fp16-mixed (fp32 master, dynamic loss scaling)\n"
    "  --device D     override the device: auto, cpu, cuda, cuda:N\n"
    "  --seeds LIST   run every run once per seed (\"1-5\" or \"1,2,7\"; names get -s<seed>):\n"
    "                 the verdicts then test each gap to fp32 paired over the seeds, each\n"
    "                 seed's run against its own fp32 twin\n"
    "  --no-pdf       skip the Qt-rendered PNG charts and report.pdf\n"
    "  --nproc N      data parallel on N local processes (c10d Gloo on 127.0.0.1): each\n"
    "                 trains batch_size / N rows of every global batch, gradients are\n"
    "                 averaged; the optimizer state is sharded over the processes (ZeRO-1\n"
    "                 on a flat view; PLAB_SHARD_OPTIMIZER_STATE=0 keeps it whole on\n"
    "                 each; `memory MODEL --nproc N` projects each rank's share).\n"
    "                 `torchrun --nproc-per-node N --no-python precision-lab-cli run`\n"
    "                 does the same; PLAB_DIST_TIMEOUT_S (default 120) bounds every wait\n"
    "                 for a rank that died or hangs (named in the error). Rank 0 writes\n"
    "                 the run folder\n"
    "\n"
    "Writes config.json (re-runnable), run_info.json, summary.json, metrics.jsonl,\n"
    "metrics.csv, layers.csv, charts/*.svg, report.html (and charts/*.png,\n"
    "report.pdf in GUI builds). Metrics stream to disk as they are measured and are\n"
    "only ever appended to; every other file is replaced whole (temporary name +\n"
    "rename). Ctrl-C stops the run gracefully and still writes the report.\n"
    "Exit codes: 0 ok, 1 a run failed, 2 usage or config error, 130 interrupted.\n";

int runCommand(Args& args) {
  if (args.wantsHelp()) {
    std::cout << kRunHelp;
    return kOk;
  }
  watchForLauncher();  // first: a rank may be told before it has written anything
  const bool useFormats = args.flag("--default-formats");
  const bool useStates = args.flag("--default-states");
  const bool defaultExperiment = args.flag("--default");
  if (int(useFormats) + int(useStates) + int(defaultExperiment) > 1)
    throw UsageError("give one of --default, --default-formats and --default-states");
  const bool useDefault = defaultExperiment || useFormats || useStates;
  const bool noPdf = args.flag("--no-pdf");
  const bool overwrite = args.flag("--overwrite");
  const auto out = args.value("--out");
  const auto steps = args.intValue("--steps", 1);
  const auto mode = args.value("--mode");
  const auto device = args.value("--device");
  const auto resume = args.value("--resume");
  const auto seedList = args.value("--seeds");
  const auto nproc = args.intValue("--nproc", 1);
  const std::vector<std::string> pos = args.positionals(1);
  if (resume && (useDefault || !pos.empty()))
    throw UsageError("--resume continues the run its checkpoint came from: give no CONFIG.json or --default");
  if (resume && seedList) throw UsageError("--resume continues one run: --seeds does not apply");
  if (!resume && useDefault == !pos.empty())
    throw UsageError(useDefault ? "give either CONFIG.json or a --default experiment, not both"
                                : "missing CONFIG.json (or --default, or --resume CHECKPOINT)");

  WorldInfo world;
  try {
    world = worldFromEnvironment();
  } catch (const ConfigError& e) {
    std::cerr << "error: " << e.what() << '\n';
    return kUsage;
  }
  if (nproc && *nproc > 1024) throw UsageError("--nproc: at most 1024 processes");
  if (nproc && *nproc > 1) {
    if (world.distributed()) throw UsageError("--nproc starts its own processes: not under torchrun (RANK is set)");
    return launchLocalRanks(static_cast<int>(*nproc), world.timeout);
  }

  std::vector<RunConfig> runs;
  try {
    if (resume) {
      // checkpoint-N sits in the run's folder, next to the run's config.json.
      fs::path checkpoint = fs::path(*resume).lexically_normal();
      if (checkpoint.filename().empty()) checkpoint = checkpoint.parent_path();
      RunConfig c = readRunConfigFile(checkpoint.parent_path() / "config.json");
      c.resume_from = checkpoint.string();
      // The run that wrote it may have been killed mid-checkpoint: its
      // half-written temporaries go (only in a folder of the tool's).
      // Rank 0 alone: the others only read the checkpoint.
      if (world.writesOutputs()) removeLeftoversOfKilledRuns(checkpoint.parent_path());
      // The checkpoint holds this mode's optimizer state (Kahan buffers,
      // master weights, moments in its precision): another mode would drop
      // or invent part of it, so a resume keeps the mode it was trained in.
      if (mode && optimizerModeFromId(*mode) != c.mode)
        throw ConfigError("--mode " + *mode + " with --resume: the checkpoint was trained in mode " +
                          optimizerModeId(c.mode) + " and holds its optimizer state (" +
                          optimizerStateText(c.mode) + "); resume without --mode, or start a new run in " + *mode);
      runs = {c};
    } else if (useDefault) {
      if (useFormats) runs = loadRunConfigs(defaultFormatsExperimentJson());
      else if (useStates) runs = loadRunConfigs(defaultStatesExperimentJson());
      else runs = mode ? std::vector<RunConfig>{defaultRunConfig()} : loadRunConfigs(defaultExperimentJson());
    } else {
      runs = loadRunConfigFile(pos[0]);
    }
    if (seedList) runs = overSeeds(runs, parseSeedList(*seedList));
    for (RunConfig& c : runs) {
      if (steps) c.steps = *steps;
      if (mode) c.mode = optimizerModeFromId(*mode);
      if (device) c.device = *device;
      c = RunConfig::fromJson(c.toJson());  // re-validate after overrides
      // Before the first run, not when this one begins: a sweep would
      // otherwise train every run before it first.
      if (const std::string problem = deviceProblem(c.device); !problem.empty())
        throw ConfigError("run '" + c.name + "': " + problem);
      checkRunConfigForModel(c);  // the plan against the model's modules, as advise and the app check it
    }
    if (world.distributed()) checkGlobalBatch(world, runs.front().batch_size);
    if (world.distributed() && runs.size() > 1)
      throw ConfigError("a distributed run trains one run at a time, and this is " + std::to_string(runs.size()) +
                        " (give --default a --mode, or a config of one run)");
  } catch (const ConfigError& e) {
    std::cerr << "error: " << e.what() << '\n';
    return kUsage;
  }
  if (!world.writesOutputs()) return trainAsOtherRank(runs.front(), world);

  // The folder is locked until the report is written; the default name is
  // new per run, so two runs never share it.
  fs::path outDir;
  std::unique_ptr<RunFolderLock> folderLock;
  try {
    outDir = out ? fs::path(*out) : createUniqueRunFolder(defaultWorkspaceFolder(), report::safeFileName(runs.front().name));
    // --overwrite must not clear the checkpoint a resume reads.
    folderLock = std::make_unique<RunFolderLock>(outDir, overwrite, fs::path(runs.front().resume_from));
  } catch (const Error& e) {
    std::cerr << "error: " << e.what() << '\n';
    return kUsage;
  }
  const bool several = runs.size() > 1;
  std::set<std::string> usedFolders;
  for (RunConfig& c : runs) {
    if (!several) {
      c.output_dir = outDir.string();
      continue;
    }
    // Same folder naming as writeComparisonReport, so the streamed metrics
    // and the final report share one folder per run.
    std::string folder = report::safeFileName(c.name);
    for (int i = 2; usedFolders.count(folder); ++i) folder = report::safeFileName(c.name) + "-" + std::to_string(i);
    usedFolders.insert(folder);
    c.output_dir = (outDir / "runs" / folder).string();
  }

  std::signal(SIGINT, onSigint);
  // torchrun ends the other ranks with SIGTERM when one fails: rank 0 then
  // stops at its next collective and still writes summary.json (failed).
  if (world.distributed()) std::signal(SIGTERM, onSigint);
  const bool terminal = stderrIsTerminal();
  std::vector<RunRecord> records;
  bool interrupted = false, failed = false;
  for (const RunConfig& c : runs) {
    RunRecord r = trainOne(c, world, terminal, interrupted);
    if (r.result.status == RunStatus::Failed) {
      std::cerr << "error: run " << c.name << " failed: " << r.result.message << '\n';
      failed = true;
    }
    records.push_back(std::move(r));
    if (interrupted) break;
  }
  // The handler stays through report writing: a Ctrl-C there is noted (exit
  // 130) and the report is still completed; a second one kills at once.
  printSummary(records);  // before the report, so a report failure keeps it
  const std::string title = several ? "Precision Lab comparison" : "Precision Lab run: " + runs.front().name;
  try {
    if (several) writeComparisonReport(outDir, records);
    else writeRunReport(outDir, records.front());
    if (!noPdf && qtReportAvailable()) writeQtReport(records, outDir, title);
  } catch (const std::exception& e) {
    std::signal(SIGINT, SIG_DFL);
    std::cerr << "error: writing the report failed: " << e.what() << '\n';
    return kRunFailed;
  }
  std::signal(SIGINT, SIG_DFL);
  interrupted = interrupted || gInterrupted != 0;
  std::cout << "report: " << (outDir / "report.html").string() << std::endl;
  if (failed) {
    // Every failed run was refused for its config (the ranks disagreed, a
    // checkpoint it names was refused, ...): a config error, exit 2.
    bool allConfig = true;
    for (const RunRecord& r : records)
      if (r.result.status == RunStatus::Failed && !r.result.configError) allConfig = false;
    return allConfig ? kUsage : kRunFailed;
  }
  return interrupted ? kInterrupted : kOk;
}

}  // namespace plab::cli
