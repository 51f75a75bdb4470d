#include "run/run_summary.h"

#include <algorithm>

namespace plab::ui {

RunSummary summarizeRun(const plab::RunRecord& run, bool finished) {
  RunSummary s;
  const auto& steps = run.steps;
  s.stepsDone = static_cast<int64_t>(steps.size());
  if (!steps.empty()) s.finalLoss = steps.back().loss;
  for (auto it = steps.rbegin(); it != steps.rend(); ++it)
    if (it->valLoss) {
      s.finalValLoss = it->valLoss;
      break;
    }
  // The rounded-away mean is over the steps that measured it only.
  double roundedSum = 0, tpsSum = 0;
  int64_t roundedSteps = 0;
  for (const auto& m : steps) {
    if (m.roundedAwayFraction) {
      roundedSum += *m.roundedAwayFraction;
      ++roundedSteps;
    }
    tpsSum += m.tokensPerSecond;
  }
  if (roundedSteps > 0) s.meanRoundedAway = roundedSum / static_cast<double>(roundedSteps);
  if (!steps.empty()) s.tokensPerSecond = tpsSum / static_cast<double>(steps.size());

  s.memoryBytes = !steps.empty() ? steps.back().memory.total() : run.info.measuredMemory.total();
  s.fp32BaselineBytes = run.info.fp32Baseline.total();
  if (s.fp32BaselineBytes == 0) s.fp32BaselineBytes = plab::fp32AdamWBaseline(run.info.parameterCount).total();

  if (finished) {  // the trainer's own totals win once they exist
    const auto& r = run.result;
    s.stepsDone = std::max(s.stepsDone, r.stepsDone);
    if (r.stepsDone > 0) s.finalLoss = r.finalLoss;
    if (r.finalValLoss) s.finalValLoss = r.finalValLoss;
    if (r.memory.total() > 0) s.memoryBytes = r.memory.total();
    if (r.meanTokensPerSecond > 0) s.tokensPerSecond = r.meanTokensPerSecond;
    if (r.stepsDone > 0) s.meanRoundedAway = r.meanRoundedAwayFraction;
  }
  if (s.fp32BaselineBytes > 0 && s.memoryBytes > 0)
    s.savedFraction = 1.0 - double(s.memoryBytes) / double(s.fp32BaselineBytes);
  return s;
}

}  // namespace plab::ui
