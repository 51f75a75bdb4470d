#include "panels/layer_measurements.h"

namespace plab::ui {

std::map<std::string, LayerMeasurement> layerMeasurements(const plab::RunRecord& run) {
  struct Sums {
    double rounded = 0, lost = 0;
    int roundedSteps = 0, windows = 0;
  };
  std::map<std::string, Sums> sums;
  for (const plab::StepMetrics& step : run.steps) {
    for (const auto& l : step.layers) {
      sums[l.layer].rounded += l.roundedAwayFraction;
      ++sums[l.layer].roundedSteps;
    }
    for (const auto& w : step.windowLayers) {
      sums[w.layer].lost += w.updateLost;
      ++sums[w.layer].windows;
    }
  }
  std::map<std::string, LayerMeasurement> out;
  for (const auto& [layer, s] : sums) {
    LayerMeasurement m;
    if (s.roundedSteps > 0) m.roundedAway = s.rounded / s.roundedSteps;
    if (s.windows > 0) m.updateLost = s.lost / s.windows;
    out[layer] = m;
  }
  return out;
}

}  // namespace plab::ui
