#include "report/run_relations.h"

#include "report/fp32_twin.h"
#include "report/run_order.h"

#include <stdexcept>

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

nlohmann::json familyKey(const RunConfig& c, bool withoutMoments) { return familyKeyOfJson(c.toJson(), withoutMoments); }

nlohmann::json familyKeyOfJson(nlohmann::json key, bool withoutMoments) {
  for (const char* field : {"name", "seed", "output_dir", "resume_from", "checkpoint_every"}) key.erase(field);
  if (withoutMoments) key["adamw"].erase("moments");
  return key;
}

const std::vector<size_t>& RunRelations::mixedFamilyOf(size_t run) const {
  static const std::vector<size_t> none;
  const auto it = mixedFamilies.find(mixedFamilyKeys.at(run));
  return it == mixedFamilies.end() ? none : it->second;
}

RunKeys runKeys(const RunConfig& c) {
  const nlohmann::json config = c.toJson();  // once for all four keys
  RunKeys k;
  k.twin = fp32TwinKeyOfJson(config).dump();
  nlohmann::json family = familyKeyOfJson(config);
  k.family = family.dump();
  family["plan"].erase("gemm_format");
  family["plan"].erase("gemm_formats");
  k.gemmReference = family.dump();
  nlohmann::json withoutMoments = familyKeyOfJson(config, /*withoutMoments=*/true);
  withoutMoments["mode"] = optimizerModeId(OptimizerMode::Fp32MasterWeights);
  k.mixedFamily = withoutMoments.dump();
  return k;
}

RunRelations relateRuns(const std::vector<RunRecord>& runs) {
  std::vector<RunKeys> keys;
  keys.reserve(runs.size());
  for (const RunRecord& r : runs) keys.push_back(runKeys(r.config));
  std::vector<const RunKeys*> pointers;
  pointers.reserve(keys.size());
  for (const RunKeys& k : keys) pointers.push_back(&k);
  return relateRuns(runs, pointers);
}

RunRelations relateRuns(const std::vector<RunRecord>& runs, const std::vector<const RunKeys*>& keys) {
  RunRelations r;
  const size_t n = runs.size();
  if (keys.size() != n) throw std::invalid_argument("relateRuns: one RunKeys per run expected");
  std::unordered_map<std::string, std::vector<size_t>> fp32ByKey, byFolderName;
  r.familyKeys.resize(n);
  r.mixedFamilyKeys.resize(n);
  r.gemmReferenceKeys.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const RunConfig& c = runs[i].config;
    const RunKeys& k = *keys[i];
    if (c.mode == OptimizerMode::Fp32AdamW) fp32ByKey[k.twin].push_back(i);
    r.familyKeys[i] = k.family;
    r.families[k.family].push_back(i);
    r.gemmReferenceKeys[i] = k.gemmReference;
    r.gemmReferenceFamilies[k.gemmReference].push_back(i);
    // A mixed run's key without moments is its own mixed-family key.
    if (c.mode == OptimizerMode::Fp32MasterWeights) r.mixedFamilies[k.mixedFamily].push_back(i);
    r.mixedFamilyKeys[i] = k.mixedFamily;
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
    const auto it = fp32ByKey.find(keys[i]->twin);
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
