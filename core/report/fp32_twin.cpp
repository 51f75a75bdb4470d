#include "report/fp32_twin.h"

#include <filesystem>

#include "report/run_order.h"
#include "report/run_relations.h"

namespace plab::report {

nlohmann::json fp32TwinKey(const RunConfig& config) { return fp32TwinKeyOfJson(config.toJson()); }

nlohmann::json fp32TwinKeyOfJson(nlohmann::json key) {
  // loss_scale: fp16-mixed's scaler settings, which an fp32 run has no use for.
  for (const char* field : {"name", "mode", "plan", "output_dir", "resume_from", "checkpoint_every",
                            "layer_stats_every", "update_window", "loss_scale"})
    key.erase(field);
  for (const char* field : {"moments", "kernels"}) key["adamw"].erase(field);
  return key;
}

bool finishedRun(const RunRecord& r) {
  return r.result.status == RunStatus::Completed && r.result.stepsDone >= r.config.steps && !r.steps.empty();
}

namespace {

void collectDifferences(const nlohmann::json& a, const nlohmann::json& b, const std::string& prefix,
                        std::vector<std::string>& out) {
  if (a.is_object() && b.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it)
      collectDifferences(it.value(), b.contains(it.key()) ? b.at(it.key()) : nlohmann::json(), prefix + it.key() + ".",
                         out);
    for (auto it = b.begin(); it != b.end(); ++it)
      if (!a.contains(it.key())) out.push_back(prefix + it.key());
    return;
  }
  if (a != b) out.push_back(prefix.substr(0, prefix.size() - 1));
}

// A run's folder without a trailing separator ("runs/a/" is "runs/a").
std::filesystem::path folderPath(const RunRecord& run) {
  std::filesystem::path p = std::filesystem::path(run.config.output_dir).lexically_normal();
  return p.filename().empty() ? p.parent_path() : p;
}

}  // namespace

std::vector<std::string> fp32TwinKeyDifferences(const RunConfig& a, const RunConfig& b) {
  std::vector<std::string> out;
  collectDifferences(fp32TwinKey(a), fp32TwinKey(b), "", out);
  return out;
}

std::string runFolderName(const RunRecord& run) {
  return run.config.output_dir.empty() ? std::string() : folderPath(run).filename().string();
}

std::optional<size_t> fp32TwinIndex(const std::vector<RunRecord>& runs, size_t run) {
  if (run >= runs.size()) return std::nullopt;
  return relateRuns(runs).twins[run];
}

std::vector<std::optional<size_t>> fp32TwinIndices(const std::vector<RunRecord>& runs) { return relateRuns(runs).twins; }

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
  // The runs that share the name, in the order they started (the same
  // after a restart, whatever the list order).
  int ordinal = 1;
  for (size_t j : startOrder(runs)) {
    if (j == i) break;
    if (runs[j].config.name == name) ++ordinal;
  }
  return ordinal > 1 ? name + " (" + std::to_string(ordinal) + ")" : name;
}

Fp32ReferenceChoice fp32ReferenceChoice(const std::vector<RunRecord>& runs, size_t i) {
  return fp32ReferenceChoice(runs, relateRuns(runs), i);
}

Fp32ReferenceChoice fp32ReferenceChoice(const std::vector<RunRecord>& runs, const RunRelations& relations, size_t i) {
  Fp32ReferenceChoice c;
  if (i >= runs.size()) return c;
  c.index = relations.twins.at(i);
  c.byHand = !runs[i].fp32Reference.empty() && runs[i].config.mode != OptimizerMode::Fp32AdamW;
  c.missing = c.byHand && !c.index;
  if (c.byHand && c.index) c.differences = fp32TwinKeyDifferences(runs[i].config, runs[*c.index].config);
  return c;
}

namespace {

std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

}  // namespace

std::string fp32TwinCell(const std::vector<RunRecord>& runs, size_t i) { return fp32TwinCell(runs, relateRuns(runs), i); }

std::string fp32TwinCell(const std::vector<RunRecord>& runs, const RunRelations& relations, size_t i) {
  const Fp32ReferenceChoice c = fp32ReferenceChoice(runs, relations, i);
  if (c.missing) return "chosen " + runs[i].fp32Reference + " not listed";
  if (!c.index) return "no fp32 twin";
  if (*c.index == i) return "itself";
  return relations.labels[*c.index] + (c.byHand ? " (chosen)" : "");
}

std::string fp32TwinText(const std::vector<RunRecord>& runs, size_t i) { return fp32TwinText(runs, relateRuns(runs), i); }

std::string fp32TwinText(const std::vector<RunRecord>& runs, const RunRelations& relations, size_t i) {
  const Fp32ReferenceChoice c = fp32ReferenceChoice(runs, relations, i);
  if (c.missing)
    return "the fp32 run chosen by hand (" + runs[i].fp32Reference +
           ") is not listed, not a measured fp32 run, or failed: no reference";
  if (!c.index) return "no fp32 twin";
  if (*c.index == i) return "itself (fp32)";
  if (!c.byHand) return "fp32 twin: " + relations.labels[*c.index];
  return "fp32 run " + relations.labels[*c.index] + ", chosen by hand; " +
         (c.differences.empty() ? std::string("the same config except mode and plan")
                                : "its config differs in: " + joined(c.differences));
}

std::string fp32ReferencePhrase(const std::vector<RunRecord>& runs, size_t i) {
  return fp32ReferencePhrase(runs, relateRuns(runs), i);
}

std::string fp32ReferencePhrase(const std::vector<RunRecord>& runs, const RunRelations& relations, size_t i) {
  const Fp32ReferenceChoice c = fp32ReferenceChoice(runs, relations, i);
  if (!c.index) return {};
  if (!c.byHand) return "fp32 twin " + relations.labels[*c.index];
  return "fp32 run " + relations.labels[*c.index] + " (chosen by hand" +
         (c.differences.empty() ? std::string(")") : "; differs in: " + joined(c.differences) + ")");
}

}  // namespace plab::report
