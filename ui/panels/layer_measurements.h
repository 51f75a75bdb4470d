#pragma once
// What one run measured per layer, for the layer tree: the mean rounded-away
// share over its statistics steps and the mean update lost over its
// windows, with that mean's uncertainty and whether it is evidence at all
// (precision/update_stats.h: lostEvidence). Torch-free.
#include <map>
#include <optional>
#include <string>

#include "report/run_report.h"

namespace plab::ui {

struct LayerMeasurement {
  double roundedAway = -1;  // < 0: not measured
  double updateLost = -1;   // < 0 and no windows: not measured (a measured one may be negative)
  int windows = 0;          // windows that measured updateLost
  // Of the mean: sqrt(sum of the windows' se^2) / windows (the windows taken
  // as independent); unset where the run folder predates it, inf where a
  // window had too few elements to estimate it.
  std::optional<double> updateLostStdError;
  std::optional<double> updatePending;  // Kahan, mixed: mean share still in the buffer or master copy
  int64_t elements = 0;                 // tracked per window (0: not recorded)
  bool enoughEvidence = true;
  std::string evidenceReason;           // why not, when !enoughEvidence
  // Quantized moment stores: the mean over the windows that measured it of
  // the moments' relative error (LayerWindowMetrics::momentErrorM/V); unset elsewhere.
  std::optional<double> momentErrorM, momentErrorV;
  int momentWindows = 0;
};

std::map<std::string, LayerMeasurement> layerMeasurements(const plab::RunRecord& run);

class RunStore;
// The run whose per-layer figures the layer tree shows once `model` loads
// (at start, the runs read back from the workspace): the newest by start
// time (one not yet on disk counts as newest) of the readable runs of that
// model (source, path, revision) that measured any layer. -1: none. A run
// listed without its per-layer records counts by its step statistics; its
// records are then read (run/run_details.h) before the tree can show them.
int newestMeasuredRun(const RunStore& store, const plab::ModelSpec& model);

}  // namespace plab::ui
