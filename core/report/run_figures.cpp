#include "report/run_figures.h"

#include <cmath>

#include "report/fp32_comparison.h"
#include "report/number_text.h"
#include "report/run_relations.h"

namespace plab::report {
namespace {

const char* const kNone = "–";

}  // namespace

RunResult resultFromSteps(const RunInfo& info, const std::vector<StepMetrics>& steps) {
  RunResult r;
  r.status = RunStatus::Stopped;
  r.memory = info.measuredMemory;
  if (!steps.empty()) {
    r.stepsDone = steps.back().step;
    r.finalLoss = steps.back().loss;
    r.memory = steps.back().memory;
  }
  double rounded = 0, lost = 0, error = 0, lostVariance = 0, seconds = 0;
  int64_t roundedSteps = 0, windows = 0, timedSteps = 0;
  bool everyWindowHasSe = true;
  for (const StepMetrics& m : steps) {
    if (m.valLoss) r.finalValLoss = m.valLoss;
    if (m.roundedAwayFraction) {
      rounded += *m.roundedAwayFraction;
      ++roundedSteps;
    }
    if (m.updateLost && std::isfinite(*m.updateLost)) {
      lost += *m.updateLost;
      error += m.updateError.value_or(0);
      if (m.updateLostStdError) lostVariance += *m.updateLostStdError * *m.updateLostStdError;
      else everyWindowHasSe = false;
      ++windows;
    }
    // The trainer counts the tokens of the steps with a finite loss over
    // their time: each step's time is its tokens over its tokens/s.
    if (std::isfinite(m.loss) && m.tokensPerSecond > 0) {
      seconds += 1.0 / m.tokensPerSecond;
      ++timedSteps;
    }
  }
  if (roundedSteps > 0) r.meanRoundedAwayFraction = rounded / double(roundedSteps);
  if (windows > 0) {
    r.meanUpdateLost = lost / double(windows);
    r.meanUpdateError = error / double(windows);
    if (everyWindowHasSe) r.meanUpdateLostStdError = std::sqrt(lostVariance) / double(windows);
  }
  if (seconds > 0) r.meanTokensPerSecond = double(timedSteps) / seconds;
  const double baseline = double(info.fp32Baseline.total());
  r.memorySavedFraction = baseline > 0 ? 1.0 - double(r.memory.total()) / baseline : 0.0;
  return r;
}

RunResult shownResult(const RunRecord& run) {
  if (!run.incomplete) return run.result;
  RunResult r = resultFromSteps(run.info, run.steps);
  r.message = run.result.message;
  return r;
}

std::string runStatusText(const RunRecord& run) { return run.incomplete ? "incomplete" : runStatusId(run.result.status); }

RunFigureTexts runFigureTexts(const std::vector<RunRecord>& runs, size_t i) {
  return runFigureTexts(runs, relateRuns(runs), i);
}

RunFigureTexts runFigureTexts(const std::vector<RunRecord>& runs, const RunRelations& relations, size_t i) {
  const RunRecord& run = runs.at(i);
  const RunResult r = shownResult(run);
  const bool measured = r.stepsDone > 0 || !run.steps.empty();
  const bool hasMemory = r.memory.total() > 0;
  const auto twin = relations.twins.at(i);
  RunFigureTexts t;
  t.status = runStatusText(run);
  t.steps = std::to_string(r.stepsDone) + " / " + std::to_string(run.config.steps);
  t.finalLoss = measured ? lossText(r.finalLoss) : kNone;
  t.finalValLoss = r.finalValLoss ? lossText(*r.finalValLoss) : kNone;
  t.memory = hasMemory ? mibText(r.memory.total()) : kNone;
  t.stateSaved = hasMemory && run.info.fp32Baseline.total() > 0 ? percentText(r.memorySavedFraction) : kNone;
  t.peakSaved = peakSavingText(run, twin ? &runs[*twin] : nullptr);  // a run without a summary measured no peak
  t.updateLost = r.meanUpdateLost && std::isfinite(*r.meanUpdateLost) ? percentText(*r.meanUpdateLost, 2) : kNone;
  t.roundedAway = measured ? percentText(r.meanRoundedAwayFraction, 2) : kNone;
  t.tokensPerSecond = r.meanTokensPerSecond > 0 ? fixedText(r.meanTokensPerSecond, 0) : kNone;
  return t;
}

}  // namespace plab::report
