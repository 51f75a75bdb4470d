#include "report/gemm_format_verdict.h"

#include <functional>
#include <map>

#include "report/fp32_twin.h"
#include "report/number_text.h"
#include "report/paired_gap.h"
#include "report/run_relations.h"

namespace plab::report {
namespace {

// What pairs a run with its bf16 reference: everything but the name, the
// seed, the folders and the GEMM formats.
nlohmann::json referenceKey(const RunConfig& c) {
  nlohmann::json key = c.toJson();
  for (const char* field : {"name", "seed", "output_dir", "resume_from", "checkpoint_every"}) key.erase(field);
  key["plan"].erase("gemm_format");
  key["plan"].erase("gemm_formats");
  return key;
}

std::string nameWithoutSeed(const std::string& name, uint64_t seed) {
  const std::string suffix = "-s" + std::to_string(seed);
  if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
    return name.substr(0, name.size() - suffix.size());
  return name;
}

// The verdicts of the families of `candidates` (indices in list order;
// all runs of such a family must be among them for the family to be
// whole); referencesOf(i) lists, in list order, the runs whose referenceKey
// may equal run i's.
std::vector<GemmFormatVerdict> verdictsOf(const std::vector<RunRecord>& runs, const std::vector<size_t>& candidates,
                                          const std::function<const std::vector<size_t>&(size_t)>& referencesOf,
                                          const std::function<std::string(size_t)>& familyOf) {
  std::vector<GemmFormatVerdict> out;
  std::map<std::string, size_t> families;  // familyKey dump -> index in out
  for (size_t i : candidates) {
    const RunConfig& c = runs[i].config;
    if (!c.plan.usesLowPrecisionGemms() || !finishedRun(runs[i]) || !runs[i].result.finalValLoss) continue;
    const nlohmann::json ref = referenceKey(c);
    const RunRecord* reference = nullptr;
    for (size_t j : referencesOf(i)) {
      const RunRecord& r = runs[j];
      if (!r.config.plan.usesLowPrecisionGemms() && r.config.seed == c.seed && finishedRun(r) &&
          r.result.finalValLoss && referenceKey(r.config) == ref) {
        reference = &r;
        break;
      }
    }
    if (!reference) continue;
    const std::string key = familyOf(i);
    auto [it, added] = families.emplace(key, out.size());
    if (added) {
      GemmFormatVerdict v;
      v.run = i;
      v.label = nameWithoutSeed(c.name, c.seed);
      out.push_back(std::move(v));
    }
    out[it->second].differences.push_back(*runs[i].result.finalValLoss - *reference->result.finalValLoss);
  }
  for (GemmFormatVerdict& v : out) {
    v.estimate = pairedEstimate(v.differences);
    const PairedEstimate& e = v.estimate;
    if (e.pairs < 2) {
      v.text = "val loss minus the bf16 run's " + lossDeltaText(e.mean) + " (one seed: run more seeds for a paired test)";
    } else {
      v.text = "val loss minus the bf16 run's " + lossDeltaText(e.mean) + " over " + std::to_string(e.pairs) +
               " seeds (95 % CI " + lossDeltaText(e.ciLow) + " to " + lossDeltaText(e.ciHigh) + ", paired): " +
               (e.beyondNoise() ? (e.mean > 0 ? "behind bf16 beyond seed noise" : "ahead of bf16 beyond seed noise")
                                : "within seed noise of bf16");
    }
  }
  return out;
}

}  // namespace

std::vector<GemmFormatVerdict> gemmFormatVerdicts(const std::vector<RunRecord>& runs) {
  std::vector<size_t> all(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) all[i] = i;
  return verdictsOf(
      runs, all, [&all](size_t) -> const std::vector<size_t>& { return all; },
      [&runs](size_t i) { return familyKey(runs[i].config).dump(); });
}

std::string gemmFormatVerdictText(const std::vector<RunRecord>& runs, size_t i) {
  if (i >= runs.size()) return {};
  return gemmFormatVerdictText(runs, relateRuns(runs), i);
}

std::string gemmFormatVerdictText(const std::vector<RunRecord>& runs, const RunRelations& relations, size_t i) {
  if (i >= runs.size() || !runs[i].config.plan.usesLowPrecisionGemms() || !finishedRun(runs[i])) return {};
  // Only run i's family and its references: the table asks this for every row.
  const auto verdicts = verdictsOf(
      runs, relations.familyOf(i),
      [&](size_t j) -> const std::vector<size_t>& {
        return relations.gemmReferenceFamilies.at(relations.gemmReferenceKeys.at(j));
      },
      [&](size_t j) { return relations.familyKeys.at(j); });
  return verdicts.empty() ? std::string() : "GEMMs: " + verdicts.front().text;
}

}  // namespace plab::report
