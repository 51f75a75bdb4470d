#include "report/report_header.h"

#include <map>

namespace plab::report {
namespace {

bool hasModelInfo(const RunRecord& r) { return !r.info.modelType.empty() || r.info.parameterCount > 0; }

}  // namespace

ReportHeader reportHeader(const std::vector<RunRecord>& runs) {
  ReportHeader h;
  // Votes per model: completed runs first; without any, every run that
  // loaded its model.
  std::map<std::string, size_t> votes;
  for (const bool completedOnly : {true, false}) {
    for (const RunRecord& r : runs)
      if (hasModelInfo(r) && (!completedOnly || r.result.status == RunStatus::Completed))
        ++votes[toJson(r.config.model).dump()];
    if (!votes.empty()) break;
  }
  if (votes.empty()) {
    h.otherRuns = runs.size();
    return h;
  }
  // The most common model; a tie goes to the one listed first.
  std::string best;
  size_t bestVotes = 0;
  for (const RunRecord& r : runs) {
    const std::string key = toJson(r.config.model).dump();
    const auto it = votes.find(key);
    if (it != votes.end() && it->second > bestVotes) best = key, bestVotes = it->second;
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    const bool same = toJson(runs[i].config.model).dump() == best;
    (same ? h.runsOnModel : h.otherRuns) += 1;
    if (same && hasModelInfo(runs[i]) &&
        (!h.run || (runs[*h.run].result.status != RunStatus::Completed && runs[i].result.status == RunStatus::Completed)))
      h.run = i;
  }
  return h;
}

std::string reportHeaderLine(const std::vector<RunRecord>& runs) {
  const ReportHeader h = reportHeader(runs);
  if (!h.run) return "Model: unknown (no run loaded it).";
  const RunInfo& i = runs[*h.run].info;
  std::string line = "Model: " + (i.modelType.empty() ? std::string("unknown type") : i.modelType) + ", " +
                     std::to_string(i.parameterCount) + " parameters; device " + i.device + "; " +
                     std::to_string(i.tokensPerStep) + " tokens per step.";
  if (h.otherRuns > 0)
    line += " " + std::to_string(h.otherRuns) + (h.otherRuns == 1 ? " run was" : " runs were") + " on other models.";
  return line;
}

MemoryBreakdown headerFp32Baseline(const std::vector<RunRecord>& runs) {
  const ReportHeader h = reportHeader(runs);
  return h.run ? runs[*h.run].info.fp32Baseline : MemoryBreakdown{};
}

}  // namespace plab::report
