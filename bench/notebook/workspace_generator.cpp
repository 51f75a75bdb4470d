#include "notebook/workspace_generator.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "report/run_folder_reader.h"
#include "report/run_index.h"
#include "train/run_config.h"
#include "util/atomic_file.h"
#include "util/run_folder.h"
#include "util/json_file.h"

namespace plab::bench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kGeneratorVersion = 2;  // 2: two models
constexpr double kLrs[] = {5e-5, 1e-5, 2e-5, 1e-4, 2e-4, 5e-4, 1e-3, 3e-5};
constexpr int kLrCount = sizeof(kLrs) / sizeof(kLrs[0]);

fs::path stampOf(const fs::path& workspace) { return workspace.parent_path() / (workspace.filename().string() + ".stamp.json"); }

json readJson(const fs::path& file) {
  const JsonFile read = readJsonFile(file);
  if (!read.ok()) throw std::runtime_error("cannot read " + file.string());
  return read.value;
}

std::string compact(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// The folder right under `templates` that holds `run` (its sweep's root);
// `run` itself when it lies directly under `templates`.
fs::path sweepRootOf(const fs::path& templates, const fs::path& run) {
  const fs::path root = fs::weakly_canonical(templates);
  const fs::path relative = fs::weakly_canonical(run).lexically_relative(root);
  if (relative.empty() || *relative.begin() == "..") throw std::runtime_error(run.string() + " is not under " + templates.string());
  return root / *relative.begin();
}

}  // namespace

std::string modelTag(const json& config) {
  const json model = config.value("model", json::object());
  const std::string path = model.value("path", "");
  return path.empty() ? "tiny-gpt2" : fs::path(path).filename().string();
}

std::vector<fs::path> findTemplateRuns(const fs::path& dir) {
  std::vector<fs::path> runs = findRunFolders(dir);
  if (runs.empty()) throw std::runtime_error(dir.string() + " holds no run folder to copy");
  // By model, fp32 first within a model: the 1-run workspace is an fp32 run,
  // and every other run's fp32 twin comes before it in the plan.
  const auto key = [](const fs::path& p) {
    const json c = readJson(p / "config.json");
    return std::make_pair(modelTag(c), c.value("mode", "") != "fp32");
  };
  std::stable_sort(runs.begin(), runs.end(), [&](const fs::path& a, const fs::path& b) { return key(a) < key(b); });
  return runs;
}

PlannedRun plannedRun(int i, size_t templateCount) {
  const int family = i / kSeedsPerConfig;
  const int modes = static_cast<int>(templateCount);
  const int sweep = family / modes;  // the (lr, wd) point every mode shares
  PlannedRun p;
  p.templateIndex = static_cast<size_t>(family % modes);
  p.lr = kLrs[sweep % kLrCount];
  p.weightDecay = 0.01 * (sweep / kLrCount);
  p.seed = static_cast<uint64_t>(1 + i % kSeedsPerConfig);
  char name[48];
  std::snprintf(name, sizeof name, "nb%04d", i);
  p.name = std::string(name) + "-lr" + compact(p.lr) + "-wd" + compact(p.weightDecay) + "-s" + std::to_string(p.seed);
  return p;
}

void ensureWorkspace(const fs::path& templates, const fs::path& workspace, int runs) {
  const fs::path stamp = stampOf(workspace);
  // The index version too: copies indexed in another format would be read
  // in full (and indexed again) by every open, not what a user's tool writes.
  const json want = {{"generator", kGeneratorVersion},
                     {"index_version", report::kRunIndexVersion},
                     {"runs", runs},
                     {"templates", fs::absolute(templates).string()}};
  if (fs::exists(stamp) && fs::is_directory(workspace)) {
    const JsonFile read = readJsonFile(stamp);
    if (read.ok() && read.value == want) return;
  }
  const std::vector<fs::path> sources = findTemplateRuns(templates);
  std::vector<std::string> suffixes;  // model and mode: "-tiny-llama-bf16-sr"
  for (const fs::path& s : sources) {
    const json c = readJson(s / "config.json");
    suffixes.push_back("-" + modelTag(c) + "-" + c.value("mode", "?"));
  }
  std::fprintf(stderr, "generating %s: %d runs from %zu templates...\n", workspace.string().c_str(), runs, sources.size());
  fs::remove(stamp);
  fs::remove_all(workspace);
  fs::create_directories(workspace);
  // Started a minute apart, in plan order, an hour ago and before.
  const auto firstStart = fs::file_time_type::clock::now() - std::chrono::minutes(runs + 60);
  for (int i = 0; i < runs; ++i) {
    const PlannedRun p = plannedRun(i, sources.size());
    const fs::path dir = workspace / (p.name + suffixes[p.templateIndex]);
    fs::copy(sources[p.templateIndex], dir, fs::copy_options::recursive);
    fs::remove(dir / report::kRunIndexFileName);
    // The tool's marker, as a run written on its own carries it: a sweep's
    // runs share the marker of their sweep folder (templates/<sweep>/), at
    // whatever depth the run lies under it.
    const fs::path marker = sweepRootOf(templates, sources[p.templateIndex]) / kRunFolderMarkerName;
    if (!fs::exists(dir / kRunFolderMarkerName) && fs::exists(marker)) fs::copy_file(marker, dir / kRunFolderMarkerName);

    RunConfig config = RunConfig::fromJson(readJson(dir / "config.json"));
    config.name = dir.filename().string();
    config.seed = p.seed;
    config.adamw.lr = p.lr;
    config.adamw.weight_decay = p.weightDecay;
    config.output_dir.clear();
    writeFileAtomically(dir / "config.json", dumpJsonForFile(config.toJson()));
    fs::last_write_time(dir / "config.json", firstStart + std::chrono::minutes(i));
    json info = readJson(dir / "run_info.json");
    info["run_name"] = config.name;
    writeJsonFileAtomically(dir / "run_info.json", info);
    report::indexRunFolder(dir);
    if ((i + 1) % 100 == 0) std::fprintf(stderr, "  %d/%d\n", i + 1, runs);
  }
  writeJsonFileAtomically(stamp, want);
}

std::vector<fs::path> workspaceRuns(const fs::path& workspace) { return findRunFolders(workspace); }

int removeIndexes(const fs::path& workspace) {
  int removed = 0;
  for (const fs::path& run : workspaceRuns(workspace)) removed += fs::remove(run / report::kRunIndexFileName) ? 1 : 0;
  return removed;
}

int countIndexes(const fs::path& workspace) {
  int current = 0;
  for (const fs::path& run : workspaceRuns(workspace)) current += report::readRunIndex(run) ? 1 : 0;
  return current;
}

void setAllHidden(const fs::path& workspace, bool hidden) {
  for (const fs::path& run : workspaceRuns(workspace)) {
    if (!hidden) {
      fs::remove(run / kRunDisplayFileName);
      continue;
    }
    RunDisplay display;
    display.name = run.filename().string();
    display.hidden = true;
    writeRunDisplay(run, display);
  }
}

}  // namespace plab::bench
