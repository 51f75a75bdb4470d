#pragma once
// The order in which runs started, read from what a run keeps across
// restarts (its folder's name), not from the order a list happens to hold
// them in: the session lists runs as they were queued, the workspace after
// a restart by file time, linked folders last. What tells a later run of a
// mode or a name apart (its line style, its " (2)") follows this order, so
// it is the same before and after a restart. Torch-free.
#include <string>
#include <vector>

#include "report/run_report.h"

namespace plab::report {

// Indices into runs, first started first: by the run's own start time
// (RunInfo::startedAt, run_info.json's "started_at": every run the trainer
// wrote since it was recorded), else by the stamp of a folder named
// "<name>-YYYYMMDD-HHMMSS[-N]" (createUniqueRunFolder: the app's runs and the
// CLI's default), after folders with neither (older CLI --out or sweep
// runs, by path); runs without a folder yet (queued) last. Ties keep the
// list order.
std::vector<size_t> startOrder(const std::vector<RunRecord>& runs);

// File-name stems, one per run and no two alike: safeFileName of the run's
// label (runLabel), with "-2", "-3"... where two labels map to one stem.
std::vector<std::string> uniqueFileStems(const std::vector<RunRecord>& runs);

}  // namespace plab::report
