#pragma once
// How a run compares with the fp32 run on the same model, data and seed:
// the loss difference per step and a one-line verdict. Torch-free; shared by
// the desktop table and charts, the HTML/PDF reports and the CLI summary.
#include <optional>
#include <string>
#include <vector>

#include "report/run_report.h"

namespace plab::report {

// The fp32 run that `run` is judged against: the latest fp32 run among
// `runs` with the same model, data, seed, batch and sequence length (the
// run itself when it is fp32). Empty when there is none.
std::optional<size_t> fp32ReferenceIndex(const std::vector<RunRecord>& runs, size_t run);

// Loss minus the reference's loss at the same step, for the steps both
// measured (train loss at every step, val loss at evaluation steps).
struct LossDifference {
  std::vector<double> steps, train;
  std::vector<double> valSteps, val;
};
LossDifference lossDifference(const RunRecord& run, const RunRecord& reference);

// Mean of the windowed update lost over the run so far (the trainer's total
// once finished); empty when no window closed.
std::optional<double> meanUpdateLost(const RunRecord& run);

// The measured memory saving: 1 - training peak of `run` / training peak of
// its fp32 reference (RunResult::trainingPeakBytes). Empty without a
// reference or without a measured peak on either side: never a made-up 0.
std::optional<double> measuredPeakSaving(const RunRecord& run, const RunRecord* fp32Reference);
// For table cells: "43.8 %", or why there is none ("no fp32 run", "not
// measured", "fp32 peak not measured").
std::string peakSavingText(const RunRecord& run, const RunRecord* fp32Reference);

// "bf16: +0.060 nats val loss vs fp32, 88.5 % of the intended update lost,
// 50.0 % state memory saved (measured peak 70.2 MiB, 43.8 % below fp32's)".
// The state saving counts weights, gradients, moments, master copies and
// Kahan buffers against all-fp32 AdamW; the peak saving is measured.
// Compares the validation losses at the last step both runs evaluated, else
// the train losses at the last step both measured.
std::string runVerdict(const RunRecord& run, const RunRecord* fp32Reference);

}  // namespace plab::report
