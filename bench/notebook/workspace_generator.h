#pragma once
// Synthetic workspaces for the notebook bench: copies of real run folders
// (notebook/template_runs.h: the six default modes on two models), each copy
// with its own name and configuration — a sweep of model × mode × lr ×
// weight decay, three seeds per configuration, so that seed families group
// and every run has its fp32 twin (same model, lr, wd and seed) — re-indexed after the edit with report::indexRunFolder, as the
// tool indexes the runs it writes. Their metrics are the template's: the
// curves of one mode coincide, which costs the app what distinct curves do.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace plab::bench {

// The template runs under dir (sweep folders or run folders), by model, fp32
// first within a model; throws std::runtime_error when there is none.
std::vector<std::filesystem::path> findTemplateRuns(const std::filesystem::path& dir);

// A run's model in its folder name: "tiny-gpt2" (embedded) or the model folder's name.
std::string modelTag(const nlohmann::json& config);

struct PlannedRun {
  std::string name;  // also the folder's name
  size_t templateIndex = 0;
  double lr = 0, weightDecay = 0;
  uint64_t seed = 0;
};
// Run i of a workspace (the same plan whatever the workspace's size).
PlannedRun plannedRun(int i, size_t templateCount);
inline constexpr int kSeedsPerConfig = 3;

// Writes `runs` runs into workspace (emptied first: it must be a folder the
// bench made, or absent) and a stamp beside it; does nothing when the stamp
// says it holds them already (the same generator, templates, run count and
// index version: report::kRunIndexVersion). Prints progress to stderr.
void ensureWorkspace(const std::filesystem::path& templates, const std::filesystem::path& workspace, int runs);

// The run folders of a generated workspace.
std::vector<std::filesystem::path> workspaceRuns(const std::filesystem::path& workspace);
// First open of older runs: their index.json removed (the app writes them again).
int removeIndexes(const std::filesystem::path& workspace);
int countIndexes(const std::filesystem::path& workspace);
// Every run unticked (display.json hidden: true), or display.json removed again.
void setAllHidden(const std::filesystem::path& workspace, bool hidden);

}  // namespace plab::bench
