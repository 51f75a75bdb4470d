#include "panels/layer_measurements.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "precision/update_stats.h"
#include "run/run_store.h"

namespace plab::ui {

std::map<std::string, LayerMeasurement> layerMeasurements(const plab::RunRecord& run) {
  struct Sums {
    double rounded = 0, lost = 0, lostVariance = 0, pending = 0, momentM = 0, momentV = 0;
    int roundedSteps = 0, windows = 0, windowsWithSe = 0, windowsWithPending = 0, momentWindows = 0;
    int64_t elements = 0;
  };
  std::map<std::string, Sums> sums;
  for (const plab::StepMetrics& step : run.steps) {
    for (const auto& l : step.layers) {
      sums[l.layer].rounded += l.roundedAwayFraction;
      ++sums[l.layer].roundedSteps;
    }
    for (const auto& w : step.windowLayers) {
      Sums& s = sums[w.layer];
      s.lost += w.updateLost;
      ++s.windows;
      if (w.updateLostStdError) {
        // NaN is how JSON brings an infinite se back: unknown either way.
        const double se = std::isfinite(*w.updateLostStdError) ? *w.updateLostStdError : INFINITY;
        s.lostVariance += se * se;
        ++s.windowsWithSe;
      }
      if (w.updatePending) {
        s.pending += *w.updatePending;
        ++s.windowsWithPending;
      }
      if (w.elements) s.elements = *w.elements;
      if (w.momentErrorM && w.momentErrorV) {
        s.momentM += *w.momentErrorM;
        s.momentV += *w.momentErrorV;
        ++s.momentWindows;
      }
    }
  }
  std::map<std::string, LayerMeasurement> out;
  for (const auto& [layer, s] : sums) {
    LayerMeasurement m;
    if (s.roundedSteps > 0) m.roundedAway = s.rounded / s.roundedSteps;
    m.windows = s.windows;
    m.elements = s.elements;
    if (s.windows > 0) {
      m.updateLost = s.lost / s.windows;
      // Old folders record no se; a partial record cannot give the mean's.
      if (s.windowsWithSe == s.windows) m.updateLostStdError = std::sqrt(s.lostVariance) / s.windows;
      if (s.windowsWithPending == s.windows) m.updatePending = s.pending / s.windows;
      const plab::LostEvidence e = plab::lostEvidence(m.updateLostStdError, m.elements);
      m.enoughEvidence = e.enough;
      m.evidenceReason = e.reason;
    }
    if (s.momentWindows > 0) {
      m.momentErrorM = s.momentM / s.momentWindows;
      m.momentErrorV = s.momentV / s.momentWindows;
      m.momentWindows = s.momentWindows;
    }
    out[layer] = m;
  }
  return out;
}

int newestMeasuredRun(const RunStore& store, const plab::ModelSpec& model) {
  int best = -1;
  qint64 bestStart = 0;
  for (int i = 0; i < store.size(); ++i) {
    if (store.state(i) == RunState::Unreadable) continue;
    const plab::RunRecord& r = store.record(i);
    const plab::ModelSpec& m = r.config.model;
    if (m.source != model.source || m.path != model.path || m.revision != model.revision) continue;
    // A run listed with scalar steps only (report/run_index.h) measured
    // layers where its steps have the statistics that come with them.
    const bool detailed = store.isDetailed(i);
    const bool measured = std::any_of(r.steps.begin(), r.steps.end(), [detailed](const plab::StepMetrics& s) {
      return !s.layers.empty() || !s.windowLayers.empty() ||
             (!detailed && (s.roundedAwayFraction.has_value() || s.updateLost.has_value()));
    });
    if (!measured) continue;
    const QDateTime started = store.started(i);
    const qint64 start = started.isValid() ? started.toMSecsSinceEpoch() : std::numeric_limits<qint64>::max();
    if (best < 0 || start >= bestStart) best = i, bestStart = start;  // a tie: the later in the list
  }
  return best;
}

}  // namespace plab::ui
