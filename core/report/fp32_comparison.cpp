#include "report/fp32_comparison.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "report/number_text.h"
#include "report/paired_gap.h"
#include "report/run_relations.h"

namespace plab::report {
namespace {

std::string fixedDigits(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string text = buf;
  // -0.00004 % is "0.0 %", not "-0.0 %": a sign without a digit reads as a loss.
  if (text[0] == '-' && text.find_first_of("123456789") == std::string::npos) text.erase(0, 1);
  return text;
}

// The reference's metrics of `step`, or null: steps are recorded in
// increasing order, so a binary search finds them.
const StepMetrics* stepOf(const RunRecord& r, int64_t step) {
  const auto it = std::lower_bound(r.steps.begin(), r.steps.end(), step,
                                   [](const StepMetrics& m, int64_t s) { return m.step < s; });
  return it != r.steps.end() && it->step == step ? &*it : nullptr;
}

std::string mibShortText(int64_t bytes) { return fixedDigits(double(bytes) / (1024.0 * 1024.0), 1) + " MiB"; }

// The measured side of the verdict's memory figure.
std::string peakClause(const RunRecord& run, const RunRecord* fp32Reference) {
  const std::optional<int64_t>& peak = run.result.trainingPeakBytes;
  if (!peak) return run.result.status == RunStatus::Completed ? "peak not measured" : "peak not measured yet";
  const std::string measured = "measured peak " + mibShortText(*peak);
  if (run.config.mode == OptimizerMode::Fp32AdamW) return measured;
  if (!fp32Reference) return measured + "; no fp32 twin to compare the peak with";
  const std::optional<int64_t>& fp32Peak = fp32Reference->result.trainingPeakBytes;
  if (!fp32Peak || *fp32Peak <= 0) return measured + "; the fp32 run's peak is not measured";
  const double saved = 1.0 - double(*peak) / double(*fp32Peak);
  return measured + ", " + fixedDigits(100 * std::abs(saved), 1) + (saved >= 0 ? " % below" : " % above") + " fp32's";
}

}  // namespace

LossDifference lossDifference(const RunRecord& run, const RunRecord& reference) {
  LossDifference d;
  for (const StepMetrics& m : run.steps) {
    const StepMetrics* ref = stepOf(reference, m.step);
    if (!ref) continue;
    if (std::isfinite(m.loss) && std::isfinite(ref->loss)) {
      d.steps.push_back(static_cast<double>(m.step));
      d.train.push_back(m.loss - ref->loss);
    }
    if (m.valLoss && ref->valLoss) {
      d.valSteps.push_back(static_cast<double>(m.step));
      d.val.push_back(*m.valLoss - *ref->valLoss);
    }
  }
  return d;
}

std::optional<FinalDifference> finalDifference(const RunRecord& run, const RunRecord& twin) {
  // Walking back from the run's last step finds it without building the
  // whole difference series (the table asks on every step).
  const StepMetrics *train = nullptr, *trainRef = nullptr;
  for (auto it = run.steps.rbegin(); it != run.steps.rend(); ++it) {
    if (train && !it->valLoss) continue;  // only an evaluation step can still matter
    const StepMetrics* ref = stepOf(twin, it->step);
    if (!ref) continue;
    if (it->valLoss && ref->valLoss) return FinalDifference{*it->valLoss - *ref->valLoss, it->step, true};
    if (!train && std::isfinite(it->loss) && std::isfinite(ref->loss)) train = &*it, trainRef = ref;
  }
  if (!train) return std::nullopt;
  return FinalDifference{train->loss - trainRef->loss, train->step, false};
}

std::optional<double> meanUpdateLost(const RunRecord& run) {
  if (run.result.meanUpdateLost) return run.result.meanUpdateLost;
  double sum = 0;
  int count = 0;
  for (const StepMetrics& m : run.steps)
    if (m.updateLost && std::isfinite(*m.updateLost)) {
      sum += *m.updateLost;
      ++count;
    }
  return count > 0 ? std::optional<double>(sum / count) : std::nullopt;
}

std::optional<double> meanUpdateLostStdError(const RunRecord& run) {
  if (run.result.meanUpdateLostStdError) return run.result.meanUpdateLostStdError;
  double sumSquares = 0;
  int count = 0;
  for (const StepMetrics& m : run.steps) {
    if (!m.updateLost || !std::isfinite(*m.updateLost)) continue;
    if (!m.updateLostStdError || !std::isfinite(*m.updateLostStdError)) return std::nullopt;
    sumSquares += *m.updateLostStdError * *m.updateLostStdError;
    ++count;
  }
  return count > 0 ? std::optional<double>(std::sqrt(sumSquares) / count) : std::nullopt;
}

std::optional<double> measuredPeakSaving(const RunRecord& run, const RunRecord* fp32Reference) {
  if (!fp32Reference) return std::nullopt;
  const std::optional<int64_t>& peak = run.result.trainingPeakBytes;
  const std::optional<int64_t>& fp32Peak = fp32Reference->result.trainingPeakBytes;
  if (!peak || !fp32Peak || *fp32Peak <= 0) return std::nullopt;
  return 1.0 - double(*peak) / double(*fp32Peak);
}

std::string peakSavingText(const RunRecord& run, const RunRecord* fp32Reference) {
  if (!run.result.trainingPeakBytes) return "not measured";
  if (!fp32Reference) return "no fp32 twin";
  const auto saved = measuredPeakSaving(run, fp32Reference);
  if (!saved) return "fp32 peak not measured";
  // Beside it, what the whole process saved (runtime and model loading
  // included): the training peak leaves out what every run holds, so its
  // saving reads a few points higher.
  const std::optional<int64_t>& process = run.result.processPeakBytes;
  const std::optional<int64_t>& fp32Process = fp32Reference->result.processPeakBytes;
  std::string text = fixedDigits(100 * *saved, 1) + " %";
  if (process && fp32Process && *fp32Process > 0)
    text += " (process " + fixedDigits(100 * (1.0 - double(*process) / double(*fp32Process)), 1) + " %)";
  return text;
}

namespace {

// runVerdict with the reference named by `twin` ("fp32 twin t", or a run
// chosen by hand with how its config differs) and `noTwin` said without one.
std::string verdictAgainst(const RunRecord& run, const RunRecord* fp32Twin, const std::string& twin,
                           const std::string& noTwin) {
  const std::string mode = optimizerModeId(run.config.mode);
  // A failed run's losses are not a result to compare: say that it failed.
  if (run.result.status == RunStatus::Failed)
    return mode + ": failed" + (run.result.message.empty() ? std::string() : " (" + run.result.message + ")");
  if (run.steps.empty()) return mode + ": no steps measured yet";
  std::string verdict = mode + ": ";
  if (run.config.mode == OptimizerMode::Fp32AdamW) {
    verdict += "the fp32 reference";
  } else if (!fp32Twin) {
    verdict += noTwin;
  } else {
    // At the last step both runs measured, so that a run in progress is not
    // judged against the end of a finished one.
    if (const auto d = finalDifference(run, *fp32Twin))
      verdict += lossDeltaText(d->delta) + (d->validation ? " nats val loss vs " + twin
                                                          : " nats train loss vs " + twin + " at step " +
                                                                std::to_string(d->step));
    else
      verdict += "no step in common with " + twin + " yet";
  }
  if (const auto lost = meanUpdateLost(run)) {
    // With its standard error when every window measured one (update_stats.h).
    const auto se = meanUpdateLostStdError(run);
    verdict += ", " + fixedDigits(100 * *lost, 1) +
               (se && std::isfinite(*se) ? " ± " + fixedDigits(100 * *se, 1) : std::string()) +
               " % of the intended update lost";
  }
  const int64_t baseline = run.info.fp32Baseline.total();
  const int64_t memory = run.steps.back().memory.total();
  if (baseline > 0 && memory > 0) {
    verdict += ", " + fixedDigits(100 * (1 - double(memory) / double(baseline)), 1) + " % state memory saved";
    verdict += " (" + peakClause(run, fp32Twin) + ")";
  }
  return verdict;
}

const char* const kNoTwin = "no fp32 twin (an fp32 run with this run's config except mode and plan) to compare with";

}  // namespace

std::string runVerdict(const RunRecord& run, const RunRecord* fp32Twin, const std::string& twinLabel) {
  const std::string twin = fp32Twin ? "fp32 twin " + (twinLabel.empty() ? fp32Twin->config.name : twinLabel) : "";
  return verdictAgainst(run, fp32Twin, twin, kNoTwin);
}

std::string comparisonVerdict(const std::vector<RunRecord>& runs, size_t i) {
  if (i >= runs.size()) return {};
  return comparisonVerdict(runs, relateRuns(runs), i);
}

std::string comparisonVerdict(const std::vector<RunRecord>& runs, const RunRelations& relations, size_t i) {
  if (i >= runs.size()) return {};
  // One rule (fp32_twin.h); a reference chosen by hand is named as such,
  // with the fields in which its config differs.
  const Fp32ReferenceChoice choice = fp32ReferenceChoice(runs, relations, i);
  const std::string noTwin = choice.missing ? "no fp32 reference: the fp32 run chosen by hand (" +
                                                  runs[i].fp32Reference + ") is not listed, unmeasured or failed"
                                            : std::string(kNoTwin);
  std::string verdict = verdictAgainst(runs[i], choice.index ? &runs[*choice.index] : nullptr,
                                       fp32ReferencePhrase(runs, relations, i), noTwin);
  if (runs[i].result.status == RunStatus::Failed) return verdict;
  if (const std::string paired = pairedGapText(runs, relations, i); !paired.empty()) verdict += "; " + paired;
  return verdict;
}

}  // namespace plab::report
