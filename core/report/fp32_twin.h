#pragma once
// Which fp32 run a run is measured against: its fp32 twin. One rule for the
// CLI summary, the desktop table and charts, and the reports. Torch-free.
#include <optional>
#include <string>
#include <vector>

#include "report/run_report.h"

namespace plab::report {

// What must be equal for an fp32 run to be a run's twin: the whole config
// except the mode and the plan (what is compared), the fields fp32 ignores
// (adamw.moments, adamw.kernels) and bookkeeping that cannot change a loss
// (name, output_dir, resume_from, checkpoint_every, and the measurement
// cadences layer_stats_every and update_window: test_report checks that
// two fp32 runs differing in them train identically).
nlohmann::json fp32TwinKey(const RunConfig& config);

// A run that trained all its steps and measured some (not failed, stopped
// or still training): what a twin is preferred to be and a paired test uses.
bool finishedRun(const RunRecord& run);

// The fp32 twin of runs[run]: an fp32 run with the same fp32TwinKey that has
// measured steps, the last completed one listed, else the last one in
// progress; the run itself when it is fp32. Empty when there is none.
std::optional<size_t> fp32TwinIndex(const std::vector<RunRecord>& runs, size_t run);
// The same for every run at once, each config's key computed once.
std::vector<std::optional<size_t>> fp32TwinIndices(const std::vector<RunRecord>& runs);

// The config of the twin to run when there is none: this run's config with
// mode fp32 and the name "<name>-fp32-twin".
RunConfig fp32TwinConfig(const RunConfig& run);

// How runs[i] is named to a reader: its name, with " (2)", " (3)"... when
// earlier runs in the list share it, so that two runs called "run" stay
// apart in legends, tables and verdicts.
std::string runLabel(const std::vector<RunRecord>& runs, size_t i);

// "fp32 twin: <label>" or "no fp32 twin" for table cells and tooltips.
std::string fp32TwinText(const std::vector<RunRecord>& runs, size_t i);

}  // namespace plab::report
