#include "report/run_relations.h"

#include "report/fp32_twin.h"
#include "report/run_order.h"

namespace plab::report {
namespace {

// An fp32 run a verdict can be measured against (fp32_twin.h's rule).
bool usableReference(const RunRecord& r) {
  return r.config.mode == OptimizerMode::Fp32AdamW && !r.steps.empty() && r.result.status != RunStatus::Failed;
}

std::string parentOf(const RunRecord& run) {
  std::filesystem::path p = std::filesystem::path(run.config.output_dir).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  return p.parent_path().string();
}

}  // namespace

nlohmann::json familyKey(const RunConfig& c, bool withoutMoments) {
  nlohmann::json key = c.toJson();
  for (const char* field : {"name", "seed", "output_dir", "resume_from", "checkpoint_every"}) key.erase(field);
  if (withoutMoments) key["adamw"].erase("moments");
  return key;
}

const std::vector<size_t>& RunRelations::mixedFamilyOf(size_t run) const {
  static const std::vector<size_t> none;
  const auto it = mixedFamilies.find(mixedFamilyKeys.at(run));
  return it == mixedFamilies.end() ? none : it->second;
}

RunRelations relateRuns(const std::vector<RunRecord>& runs) {
  RunRelations r;
  const size_t n = runs.size();
  std::vector<std::string> twinKeys(n);
  std::unordered_map<std::string, std::vector<size_t>> fp32ByKey, byFolderName;
  r.familyKeys.resize(n);
  r.mixedFamilyKeys.resize(n);
  r.gemmReferenceKeys.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const RunConfig& c = runs[i].config;
    twinKeys[i] = fp32TwinKey(c).dump();
    if (c.mode == OptimizerMode::Fp32AdamW) fp32ByKey[twinKeys[i]].push_back(i);
    nlohmann::json family = familyKey(c);
    r.familyKeys[i] = family.dump();
    r.families[r.familyKeys[i]].push_back(i);
    family["plan"].erase("gemm_format");
    family["plan"].erase("gemm_formats");
    r.gemmReferenceKeys[i] = family.dump();
    r.gemmReferenceFamilies[r.gemmReferenceKeys[i]].push_back(i);
    nlohmann::json withoutMoments = familyKey(c, /*withoutMoments=*/true);
    if (c.mode == OptimizerMode::Fp32MasterWeights) r.mixedFamilies[withoutMoments.dump()].push_back(i);
    withoutMoments["mode"] = optimizerModeId(OptimizerMode::Fp32MasterWeights);
    r.mixedFamilyKeys[i] = withoutMoments.dump();
    if (const std::string folder = runFolderName(runs[i]); !folder.empty()) byFolderName[folder].push_back(i);
  }

  r.twins.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const RunRecord& run = runs[i];
    if (run.config.mode == OptimizerMode::Fp32AdamW) {
      r.twins[i] = i;
      continue;
    }
    if (!run.fp32Reference.empty()) {
      // Chosen by hand: of the runs with that folder name the one beside
      // this run, else the first listed; never silently another.
      std::optional<size_t> chosen;
      if (const auto it = byFolderName.find(run.fp32Reference); it != byFolderName.end()) {
        const std::string parent = parentOf(run);
        for (size_t j : it->second) {
          if (j == i) continue;
          if (parentOf(runs[j]) == parent) {
            chosen = j;
            break;
          }
          if (!chosen) chosen = j;
        }
      }
      if (chosen && usableReference(runs[*chosen])) r.twins[i] = chosen;
      continue;
    }
    const auto it = fp32ByKey.find(twinKeys[i]);
    if (it == fp32ByKey.end()) continue;
    std::optional<size_t> inProgress;
    for (auto j = it->second.rbegin(); j != it->second.rend(); ++j) {
      if (!usableReference(runs[*j])) continue;
      if (finishedRun(runs[*j])) {
        inProgress = *j;
        break;
      }
      if (!inProgress) inProgress = *j;
    }
    r.twins[i] = inProgress;
  }

  r.startOrder = startOrder(runs);
  r.labels.resize(n);
  std::unordered_map<std::string, int> seen;
  for (size_t i : r.startOrder) {
    const int ordinal = ++seen[runs[i].config.name];
    r.labels[i] = ordinal > 1 ? runs[i].config.name + " (" + std::to_string(ordinal) + ")" : runs[i].config.name;
  }
  r.styles = runStyles(runs, r.startOrder);
  return r;
}

}  // namespace plab::report
