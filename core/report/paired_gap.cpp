#include "report/paired_gap.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "report/fp32_twin.h"
#include "report/number_text.h"
#include "report/run_relations.h"

namespace plab::report {
namespace {

// seed -> the difference to fp32 at that seed of the first listed finished
// member of a family (members: list order) whose twin finished.
std::map<uint64_t, FinalDifference> familyDifferences(const std::vector<RunRecord>& runs,
                                                      const std::vector<std::optional<size_t>>& twins,
                                                      const std::vector<size_t>& members) {
  std::map<uint64_t, FinalDifference> out;
  for (size_t i : members) {
    const RunRecord& r = runs[i];
    if (!finishedRun(r) || out.count(r.config.seed)) continue;
    if (!twins[i] || !finishedRun(runs[*twins[i]])) continue;
    if (const auto d = finalDifference(r, runs[*twins[i]])) out[r.config.seed] = *d;
  }
  return out;
}

std::string ciText(const PairedEstimate& e) {
  return "95 % CI " + lossDeltaText(e.ciLow) + " to " + lossDeltaText(e.ciHigh);
}

}  // namespace

double studentT975(int df) {
  static const double table[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                 2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                 2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (df < 1) return std::nan("");
  if (df <= 30) return table[df - 1];
  return 1.960 + 2.5 / df;  // within 0.002 of the exact quantile beyond 30
}

PairedEstimate pairedEstimate(const std::vector<double>& d) {
  PairedEstimate e;
  e.pairs = static_cast<int>(d.size());
  if (d.empty()) return e;
  double sum = 0;
  for (double v : d) sum += v;
  e.mean = sum / d.size();
  e.ciLow = e.ciHigh = e.mean;
  if (d.size() < 2) return e;
  double ss = 0;
  for (double v : d) ss += (v - e.mean) * (v - e.mean);
  e.sd = std::sqrt(ss / (d.size() - 1));
  const double half = studentT975(e.pairs - 1) * e.sd / std::sqrt(double(d.size()));
  e.ciLow = e.mean - half;
  e.ciHigh = e.mean + half;
  return e;
}

std::optional<PairedGap> pairedGap(const std::vector<RunRecord>& runs, size_t run) {
  if (run >= runs.size()) return std::nullopt;
  return pairedGap(runs, relateRuns(runs), run);
}

std::optional<PairedGap> pairedGap(const std::vector<RunRecord>& runs, const RunRelations& relations, size_t run) {
  if (run >= runs.size() || runs[run].config.mode == OptimizerMode::Fp32AdamW) return std::nullopt;
  // A paired figure is over finished runs; while this one trains there is none to add.
  if (!finishedRun(runs[run])) return std::nullopt;
  const std::vector<std::optional<size_t>>& twins = relations.twins;
  const auto own = familyDifferences(runs, twins, relations.familyOf(run));
  if (own.empty()) return std::nullopt;
  PairedGap gap;
  for (const auto& [seed, d] : own) {
    gap.seeds.push_back(seed);
    gap.differences.push_back(d.delta);
    gap.validation = gap.validation && d.validation;
  }
  gap.total = pairedEstimate(gap.differences);
  if (runs[run].config.mode == OptimizerMode::Fp32MasterWeights) return gap;

  const auto mixed = familyDifferences(runs, twins, relations.mixedFamilyOf(run));
  std::vector<double> compute, optimizer;
  for (const auto& [seed, d] : own) {
    const auto m = mixed.find(seed);
    if (m == mixed.end() || m->second.validation != d.validation) continue;
    compute.push_back(m->second.delta);
    optimizer.push_back(d.delta - m->second.delta);
  }
  if (!compute.empty()) {
    gap.compute = pairedEstimate(compute);
    gap.optimizer = pairedEstimate(optimizer);
  }

  // The recipe again with fp32 moments: splits the optimizer's part into
  // the weight write and the moments' storage.
  const RunConfig& c = runs[run].config;
  if (!modeHasMomentChoice(c.mode)) return gap;
  // Per-layer stores (plan.moments) stay in a sibling with fp32 adamw.moments: no fp32-moments twin.
  if (!c.plan.moments.empty()) return gap;
  const MomentPrecision moments =
      c.adamw.moments == MomentPrecision::ModeDefault ? momentPrecisionDefault(c.mode) : c.adamw.moments;
  if (moments == MomentPrecision::Fp32) return gap;
  nlohmann::json fp32MomentsKey = familyKey(c);
  fp32MomentsKey["adamw"]["moments"] = momentPrecisionId(MomentPrecision::Fp32);
  const auto fp32Family = relations.families.find(fp32MomentsKey.dump());
  if (fp32Family == relations.families.end()) return gap;
  const auto fp32Moments = familyDifferences(runs, twins, fp32Family->second);
  PairedGap::Attribution a;
  std::vector<double> total, computePart, writePart, momentsPart;
  for (const auto& [seed, d] : own) {
    const auto m = mixed.find(seed);
    const auto f = fp32Moments.find(seed);
    if (m == mixed.end() || f == fp32Moments.end()) continue;
    if (m->second.validation != d.validation || f->second.validation != d.validation) continue;
    a.seeds.push_back(seed);
    total.push_back(d.delta);
    computePart.push_back(m->second.delta);
    writePart.push_back(f->second.delta - m->second.delta);
    momentsPart.push_back(d.delta - f->second.delta);
  }
  if (a.seeds.empty()) return gap;
  double lost = 0, noise = 0;
  int lostRuns = 0, noiseRuns = 0;
  for (size_t i : relations.familyOf(run)) {
    const RunRecord& r = runs[i];
    if (!finishedRun(r)) continue;
    if (std::find(a.seeds.begin(), a.seeds.end(), r.config.seed) == a.seeds.end()) continue;
    if (r.result.meanUpdateLost) lost += *r.result.meanUpdateLost, ++lostRuns;
    if (r.result.meanUpdateNoise) noise += *r.result.meanUpdateNoise, ++noiseRuns;
  }
  if (lostRuns > 0) a.updateLost = lost / lostRuns;
  if (noiseRuns > 0) a.updateNoise = noise / noiseRuns;
  a.gap = pairedEstimate(total);
  a.compute = pairedEstimate(computePart);
  a.write = pairedEstimate(writePart);
  a.moments = pairedEstimate(momentsPart);
  gap.attribution = a;
  return gap;
}

std::string attributionText(const PairedGap::Attribution& a) {
  const auto part = [&](const char* name, const PairedEstimate& e) {
    return std::string(name) + " " + lossDeltaText(e.mean) + (e.pairs >= 2 ? " (" + ciText(e) + ")" : "");
  };
  std::string write = part("weight write", a.write);
  if (a.updateLost || a.updateNoise) {
    write += " [update lost " + (a.updateLost ? percentText(*a.updateLost, 2) : std::string("–")) + ", update noise " +
             (a.updateNoise ? percentText(*a.updateNoise, 1) : std::string("–")) + "]";
  }
  return lossDeltaText(a.gap.mean) + " = " + part("compute", a.compute) + " + " + write + " + " +
         part("moments", a.moments);
}

std::string pairedGapText(const std::vector<RunRecord>& runs, size_t run) {
  if (run >= runs.size()) return {};
  return pairedGapText(runs, relateRuns(runs), run);
}

std::string pairedGapText(const std::vector<RunRecord>& runs, const RunRelations& relations, size_t run) {
  const auto gap = pairedGap(runs, relations, run);
  if (!gap) return {};
  const PairedEstimate& t = gap->total;
  if (t.pairs < 2) return "one seed: run more seeds for a paired test";
  std::string text = "over " + std::to_string(t.pairs) + " seeds " + lossDeltaText(t.mean) + " (" + ciText(t) +
                     ", paired): " + (t.beyondNoise() ? "beyond seed noise" : "within seed noise");
  if (gap->attribution) {
    // compute (mixed), the weight write and the moments, each paired.
    text += "; over " + std::to_string(gap->attribution->seeds.size()) + " seeds with mixed and fp32-moment runs " +
            attributionText(*gap->attribution);
  } else if (gap->compute && gap->optimizer) {
    text += "; bf16 compute (mixed, " + std::to_string(gap->compute->pairs) + " seeds) " +
            lossDeltaText(gap->compute->mean) + ", optimizer " + lossDeltaText(gap->optimizer->mean);
    if (gap->optimizer->pairs >= 2)
      text += " (" + ciText(*gap->optimizer) + (gap->optimizer->beyondNoise() ? ", beyond noise)" : ", within noise)");
  }
  return text;
}

}  // namespace plab::report
