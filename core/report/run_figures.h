#pragma once
// The headline figures of a run (status, steps, losses, memory, saving,
// update lost, rounded away, tokens/s), in the one form every view shows
// them: the app's comparison table, the HTML and PDF reports and the
// comparison summary.csv. A run the trainer finished (completed, stopped,
// failed) shows its summary.json; a run without one (killed, still running,
// or read while another process writes it) shows what its steps measured,
// computed as the trainer computes its summary. Torch-free.
#include <string>
#include <vector>

#include "report/run_report.h"

namespace plab::report {

// What the trainer's summary would say after these steps: the means of the
// steps that measured rounded away and of the update-lost windows, tokens/s
// as all tokens over all step time (the harmonic mean of the steps'
// tokens/s), memory saved against info.fp32Baseline. Status Stopped and no
// message: the caller says why there is no summary.
RunResult resultFromSteps(const RunInfo& info, const std::vector<StepMetrics>& steps);

// run.result, or resultFromSteps when run.incomplete (its message kept).
RunResult shownResult(const RunRecord& run);

// "completed", "stopped", "failed", or "incomplete" (run.incomplete).
std::string runStatusText(const RunRecord& run);

// Every figure as text; "–" where nothing was measured.
struct RunFigureTexts {
  std::string status;          // runStatusText
  std::string steps;           // "254 / 20000"
  std::string finalLoss, finalValLoss;  // lossText
  std::string memory;          // "0.95 MiB": the training state
  std::string stateSaved;      // "50.0 %": against all-fp32 AdamW, from the plan
  std::string peakSaved;       // peakSavingText against the run's fp32 twin
  std::string updateLost;      // "89.52 %"
  std::string roundedAway;     // "91.04 %"
  std::string tokensPerSecond; // "11774"
};
RunFigureTexts runFigureTexts(const std::vector<RunRecord>& runs, size_t i);
struct RunRelations;  // report/run_relations.h
RunFigureTexts runFigureTexts(const std::vector<RunRecord>& runs, const RunRelations& relations, size_t i);

}  // namespace plab::report
