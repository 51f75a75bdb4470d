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

// "bf16: +0.060 nats val loss vs fp32, 88.5 % of the intended update lost,
// 50.0 % memory saved". Compares the validation losses at the last step both
// runs evaluated, else the train losses at the last step both measured.
std::string runVerdict(const RunRecord& run, const RunRecord* fp32Reference);

}  // namespace plab::report
