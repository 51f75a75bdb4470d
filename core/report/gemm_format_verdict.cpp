#include "report/gemm_format_verdict.h"

#include <functional>
#include <map>

#include "report/fp32_twin.h"
#include "report/number_text.h"
#include "report/paired_gap.h"

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

// The same and the formats: one family over seeds.
nlohmann::json familyKey(const RunConfig& c) {
  nlohmann::json key = c.toJson();
  for (const char* field : {"name", "seed", "output_dir", "resume_from", "checkpoint_every"}) key.erase(field);
  return key;
}

std::string withoutSeedSuffix(const std::string& name, uint64_t seed) {
  const std::string suffix = "-s" + std::to_string(seed);
  if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
    return name.substr(0, name.size() - suffix.size());
  return name;
}

// The verdicts of the families of the runs `consider` accepts (all runs of
// such a family must be accepted for the family to be whole).
std::vector<GemmFormatVerdict> verdictsOf(const std::vector<RunRecord>& runs,
                                          const std::function<bool(const RunConfig&)>& consider) {
  std::vector<GemmFormatVerdict> out;
  std::map<std::string, size_t> families;  // familyKey dump -> index in out
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunConfig& c = runs[i].config;
    if (!c.plan.usesLowPrecisionGemms() || !finishedRun(runs[i]) || !runs[i].result.finalValLoss) continue;
    if (!consider(c)) continue;
    const nlohmann::json ref = referenceKey(c);
    const RunRecord* reference = nullptr;
    for (const RunRecord& r : runs)
      if (!r.config.plan.usesLowPrecisionGemms() && r.config.seed == c.seed && finishedRun(r) &&
          r.result.finalValLoss && referenceKey(r.config) == ref) {
        reference = &r;
        break;
      }
    if (!reference) continue;
    const std::string key = familyKey(c).dump();
    auto [it, added] = families.emplace(key, out.size());
    if (added) {
      GemmFormatVerdict v;
      v.run = i;
      v.label = withoutSeedSuffix(c.name, c.seed);
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
  return verdictsOf(runs, [](const RunConfig&) { return true; });
}

std::string gemmFormatVerdictText(const std::vector<RunRecord>& runs, size_t i) {
  if (i >= runs.size() || !runs[i].config.plan.usesLowPrecisionGemms() || !finishedRun(runs[i])) return {};
  // Only run i's family: the table asks this for every row.
  const nlohmann::json family = familyKey(runs[i].config);
  const auto verdicts = verdictsOf(runs, [&family](const RunConfig& c) { return familyKey(c) == family; });
  return verdicts.empty() ? std::string() : "GEMMs: " + verdicts.front().text;
}

}  // namespace plab::report
