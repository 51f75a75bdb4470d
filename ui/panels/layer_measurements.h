#pragma once
// What one run measured per layer, for the layer tree: the mean rounded-away
// share over its statistics steps and the mean update lost over its
// windows. Torch-free.
#include <map>
#include <string>

#include "report/run_report.h"

namespace plab::ui {

struct LayerMeasurement {
  double roundedAway = -1;  // < 0: not measured
  double updateLost = -1;
};

std::map<std::string, LayerMeasurement> layerMeasurements(const plab::RunRecord& run);

}  // namespace plab::ui
