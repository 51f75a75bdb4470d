// `memory`: the training state each rank holds, per recipe and world size,
// projected from a model's config alone (nothing is allocated).
#include <iomanip>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_support.h"
#include "distributed/rank_memory_projection.h"
#include "model_argument.h"
#include "precision/memory_estimate.h"
#include "train/model_inspect.h"
#include "util/errors.h"

namespace plab::cli {

const char* const kMemoryHelp =
    "usage: precision-lab-cli memory MODEL [--nproc N[,N...]] [--plan PRESET] [--mode ID] [--replicated]\n"
    "                                [--json]\n"
    "\n"
    "Projects the training state each process holds when MODEL trains data parallel\n"
    "on N processes (the largest rank's share), per optimizer mode: the weights and\n"
    "gradients whole on every rank, the optimizer state (AdamW moments, mixed's fp32\n"
    "masters, Kahan buffers) cut over the ranks as `run --nproc` cuts it (ZeRO-1 on a\n"
    "flat view). From the config alone: a 70 B model costs nothing to project.\n"
    "Activations, the step's temporaries and the framework's own memory are not included.\n"
    "MODEL is what `inspect` takes (a config.json, a folder, embedded, org/name).\n"
    "\n"
    "  --nproc N,...   world sizes (default 1,8)\n"
    "  --plan PRESET   all-bf16 (default: what model.to(torch.bfloat16) gives), linear-bf16, all-fp32\n"
    "  --mode ID       one optimizer mode (default: every mode)\n"
    "  --replicated    every rank keeps the whole optimizer state (PLAB_SHARD_OPTIMIZER_STATE=0)\n"
    "  --json          one JSON object: every mode x world size, every rank's breakdown in bytes\n";

namespace {

// More world sizes than a table can show is a mistake (20,000 of them ran
// past a minute of projections).
constexpr size_t kMaxWorldSizes = 64;

std::vector<int> worldSizes(const std::string& list) {
  const std::string tooMany = "--nproc: at most " + std::to_string(kMaxWorldSizes) + " process counts";
  if (list.size() > 8 * kMaxWorldSizes) throw UsageError(tooMany);  // before anything is split
  std::vector<int> out;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (out.size() == kMaxWorldSizes) throw UsageError(tooMany);
    int n = 0;
    try {
      size_t used = 0;
      n = std::stoi(item, &used);
      if (used != item.size()) n = 0;
    } catch (const std::exception&) {
      n = 0;
    }
    if (n < 1 || n > 1 << 20)
      throw UsageError("--nproc: '" + item.substr(0, 40) + "' is not a process count (1 to 1048576)");
    out.push_back(n);
  }
  if (out.empty()) throw UsageError("--nproc: no process count");
  return out;
}

double gib(int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0); }

const MemoryBreakdown& largest(const std::vector<MemoryBreakdown>& ranks) {
  size_t best = 0;
  for (size_t r = 1; r < ranks.size(); ++r)
    if (ranks[r].total() > ranks[best].total()) best = r;
  return ranks[best];
}

}  // namespace

int memoryCommand(Args& args) {
  if (args.wantsHelp()) {
    std::cout << kMemoryHelp;
    return kOk;
  }
  const std::vector<int> sizes = worldSizes(args.value("--nproc").value_or("1,8"));
  PrecisionPlan plan;
  plan.preset = planPresetFromId(args.value("--plan").value_or("all-bf16"));
  std::vector<OptimizerMode> modes = allOptimizerModes();
  if (const auto id = args.value("--mode")) modes = {optimizerModeFromId(*id)};
  const bool sharded = !args.flag("--replicated");
  const bool json = args.flag("--json");
  const auto pos = args.positionals(1);
  if (pos.empty()) throw UsageError("missing MODEL");

  const ModelOverview model = inspectModel(modelSpecFromArgument(pos[0]));
  const auto resolved = plan.resolve(model.modules);
  const AdamWOptions options;
  nlohmann::json out = {{"model", model.sourceDescription},
                        {"parameters", model.parameterCount},
                        {"plan", planPresetId(plan.preset)},
                        {"optimizer_state_sharded", sharded},
                        {"projections", nlohmann::json::array()}};
  if (!json)
    std::cout << "model: " << model.sourceDescription << ", " << model.parameterCount << " parameters, plan "
              << planPresetId(plan.preset) << "\noptimizer state " << (sharded ? "sharded over the ranks (ZeRO-1)" : "whole on every rank")
              << "; GiB per process (the largest rank), activations not included\n\n"
              << std::left << std::setw(14) << "mode" << std::right << std::setw(7) << "ranks" << std::setw(10)
              << "weights" << std::setw(11) << "gradients" << std::setw(10) << "moments" << std::setw(9) << "master"
              << std::setw(8) << "kahan" << std::setw(8) << "scales" << std::setw(12) << "total/rank" << std::setw(13) << "bytes/param" << '\n';
  for (OptimizerMode mode : modes) {
    const auto groups = parameterGroups(model.modules, resolved, mode);
    for (int n : sizes) {
      const std::vector<MemoryBreakdown> ranks = projectRankMemory(groups, options, n, sharded);
      const MemoryBreakdown& m = largest(ranks);
      nlohmann::json perRank = nlohmann::json::array();
      for (const MemoryBreakdown& r : ranks) perRank.push_back(toJson(r));
      out["projections"].push_back({{"mode", optimizerModeId(mode)}, {"world_size", n}, {"largest_rank", toJson(m)},
                                    {"rank_memory", perRank}});
      if (json) continue;
      std::cout << std::left << std::setw(14) << optimizerModeId(mode) << std::right << std::setw(7) << n
                << std::fixed << std::setprecision(1) << std::setw(10) << gib(m.weights) << std::setw(11)
                << gib(m.gradients) << std::setw(10) << gib(m.moments) << std::setw(9) << gib(m.master)
                << std::setw(8) << gib(m.kahan) << std::setw(8) << gib(m.scales) << std::setw(12) << gib(m.total()) << std::setprecision(2)
                << std::setw(13)
                << (model.parameterCount > 0 ? static_cast<double>(m.total()) / static_cast<double>(model.parameterCount) : 0.0)
                << '\n';
    }
  }
  if (json) std::cout << out.dump(2) << '\n';
  return kOk;
}

}  // namespace plab::cli
