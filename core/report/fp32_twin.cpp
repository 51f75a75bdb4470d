#include "report/fp32_twin.h"

namespace plab::report {

nlohmann::json fp32TwinKey(const RunConfig& config) {
  nlohmann::json key = config.toJson();
  for (const char* field : {"name", "mode", "plan", "output_dir", "resume_from", "checkpoint_every",
                            "layer_stats_every", "update_window"})
    key.erase(field);
  for (const char* field : {"moments", "kernels"}) key["adamw"].erase(field);
  return key;
}

bool finishedRun(const RunRecord& r) {
  return r.result.status == RunStatus::Completed && r.result.stepsDone >= r.config.steps && !r.steps.empty();
}

namespace {

// The rule, with the key of run j from `keyOf(j)` (computed or cached).
template <class KeyOf>
std::optional<size_t> pickTwin(const std::vector<RunRecord>& runs, size_t run, const KeyOf& keyOf) {
  if (runs[run].config.mode == OptimizerMode::Fp32AdamW) return run;
  const std::string key = keyOf(run);
  std::optional<size_t> inProgress;
  for (size_t i = runs.size(); i-- > 0;) {
    const RunRecord& r = runs[i];
    if (r.config.mode != OptimizerMode::Fp32AdamW || r.steps.empty() || r.result.status == RunStatus::Failed)
      continue;
    if (keyOf(i) != key) continue;
    if (finishedRun(r)) return i;
    if (!inProgress) inProgress = i;
  }
  return inProgress;
}

}  // namespace

std::optional<size_t> fp32TwinIndex(const std::vector<RunRecord>& runs, size_t run) {
  if (run >= runs.size()) return std::nullopt;
  return pickTwin(runs, run, [&](size_t j) { return fp32TwinKey(runs[j].config).dump(); });
}

std::vector<std::optional<size_t>> fp32TwinIndices(const std::vector<RunRecord>& runs) {
  std::vector<std::string> keys;
  keys.reserve(runs.size());
  for (const RunRecord& r : runs) keys.push_back(fp32TwinKey(r.config).dump());
  std::vector<std::optional<size_t>> twins;
  for (size_t i = 0; i < runs.size(); ++i) twins.push_back(pickTwin(runs, i, [&](size_t j) { return keys[j]; }));
  return twins;
}

RunConfig fp32TwinConfig(const RunConfig& run) {
  RunConfig twin = run;
  twin.mode = OptimizerMode::Fp32AdamW;
  twin.name = run.name + "-fp32-twin";
  twin.output_dir.clear();
  twin.resume_from.clear();
  return twin;
}

std::string runLabel(const std::vector<RunRecord>& runs, size_t i) {
  if (i >= runs.size()) return {};
  const std::string& name = runs[i].config.name;
  int ordinal = 1;
  bool repeated = false;
  for (size_t j = 0; j < runs.size(); ++j) {
    if (j == i || runs[j].config.name != name) continue;
    repeated = true;
    if (j < i) ++ordinal;
  }
  return repeated && ordinal > 1 ? name + " (" + std::to_string(ordinal) + ")" : name;
}

std::string fp32TwinText(const std::vector<RunRecord>& runs, size_t i) {
  const auto twin = fp32TwinIndex(runs, i);
  if (!twin) return "no fp32 twin";
  if (*twin == i) return "itself (fp32)";
  return "fp32 twin: " + runLabel(runs, *twin);
}

}  // namespace plab::report
