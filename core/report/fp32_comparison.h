#pragma once
// How a run compares with its fp32 twin (report/fp32_twin.h): the loss
// difference per step and a one-line verdict. Torch-free; shared by the
// desktop table and charts, the HTML/PDF reports and the CLI summary.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/fp32_twin.h"
#include "report/run_report.h"

namespace plab::report {

// Loss minus the reference's loss at the same step, for the steps both
// measured (train loss at every step, val loss at evaluation steps).
struct LossDifference {
  std::vector<double> steps, train;
  std::vector<double> valSteps, val;
};
LossDifference lossDifference(const RunRecord& run, const RunRecord& reference);

// A run's loss minus its twin's at the last step both measured: validation
// loss when both evaluated, else train loss.
struct FinalDifference {
  double delta = 0;
  int64_t step = 0;
  bool validation = false;
};
std::optional<FinalDifference> finalDifference(const RunRecord& run, const RunRecord& twin);

// Mean of the windowed update lost over the run so far (the trainer's total
// once finished); empty when no window closed.
std::optional<double> meanUpdateLost(const RunRecord& run);
// Its standard error (the trainer's once finished, else sqrt(sum se^2) / n
// over the windows so far); empty when a window has none.
std::optional<double> meanUpdateLostStdError(const RunRecord& run);

// The measured memory saving: 1 - training peak of `run` / training peak of
// its fp32 reference (RunResult::trainingPeakBytes). Empty without a
// reference or without a measured peak on either side: never a made-up 0.
std::optional<double> measuredPeakSaving(const RunRecord& run, const RunRecord* fp32Reference);
// For table cells: "43.8 %", with the whole process's saving beside it
// where both runs recorded one ("17.2 % (process 15.1 %)",
// RunResult::processPeakBytes), or why there is none ("no fp32 twin", "not
// measured", "fp32 peak not measured").
std::string peakSavingText(const RunRecord& run, const RunRecord* fp32Reference);

// "bf16: +0.060 nats val loss vs fp32 twin t, 88.5 % of the intended update
// lost, 50.0 % state memory saved (measured peak 70.2 MiB, 43.8 % below
// fp32's)". The state saving counts weights, gradients, moments, master
// copies and Kahan buffers against all-fp32 AdamW; the peak saving is
// measured. Compares the validation losses at the last step both runs
// evaluated, else the train losses at the last step both measured
// (finalDifference). `twinLabel` names the twin (default: its name).
std::string runVerdict(const RunRecord& run, const RunRecord* fp32Twin, const std::string& twinLabel = {});

// The verdict of runs[i] against its fp32 twin, named as runLabel names it,
// with the paired test over seeds when the list holds several
// (pairedGapText): what the CLI, the app and the reports show.
std::string comparisonVerdict(const std::vector<RunRecord>& runs, size_t i);
std::string comparisonVerdict(const std::vector<RunRecord>& runs, const RunRelations& relations, size_t i);

}  // namespace plab::report
