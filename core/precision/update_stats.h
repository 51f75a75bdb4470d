#pragma once
// What the optimizer reports about its updates. Torch-free.
//
// Per step, on the weights the forward pass uses (the bf16 copy in mixed
// mode): "rounded away" = elements whose intended update was non-zero but
// whose stored weight did not change. Kahan and stochastic rounding keep
// this high by design (the write is deferred or randomised), so it alone
// cannot tell them from plain bf16.
//
// Over a window of K steps: with A = w_t - w_(t-K) (what arrived),
// P = the change of what Kahan's compensation buffer holds for later
// (c_t - c_(t-K)), or of what mixed's master copy is ahead of its bf16 copy
// (m - w), zero in the other modes, and S = the sum of the K intended
// updates,
//   update pending = <P, S> / ||S||^2 (the share of S still in the buffer or
//                  the master copy at the window's end, net of what was
//                  there at the start; it reaches the weights later, so it
//                  is not lost)
//   update lost  = 1 - <A + P, S> / ||S||^2 = -<A + P - S, S> / ||S||^2
//                  (the share of S that neither arrived nor waits in the
//                  buffer; negative when more arrived than intended)
//   update error = ||A - S|| / ||S||      (what arrived only: also counts
//                  unbiased noise, e.g. of stochastic rounding, and Kahan's
//                  pending part)
//   update noise = ||A + P - S|| / ||S||  (what neither arrived nor waits,
//                  as a norm: the lost part and the write's noise around
//                  the intended update, pending counted as arrived. Where
//                  nothing is lost on average (update lost ~ 0: Kahan,
//                  stochastic rounding) it is the noise the write adds to
//                  the trajectory: the stochastic rounding's random ulps,
//                  the rounding of Kahan's bf16 buffer; mixed reads ~0,
//                  its master copy being fp32)
// fp32 reads exactly 0 on all: its intended update is its own change.
//
// The uncertainty of update lost: the tracked elements are split into
// kLostGroups interleaved groups (element i in group i mod kLostGroups) and
// the ratio's standard error comes from the spread of the groups' terms
// (batch means, linearised ratio):
//   se = sqrt(G/(G-1) * sum_g (R_g - r Q_g)^2) / Q,  R_g = <A+P-S, S>_g,
//   Q_g = ||S||^2_g, r = R/Q.
// It measures how much the figure depends on which elements happen to be
// tracked: the per-element noise of stochastic rounding, of nearest
// rounding's ulp steps, of a few elements moving much more than others.
// Pending Kahan updates are taken out before, so they do not count as noise.
// Under stochastic rounding a window can see no rounding event at all in a
// small layer (every group then agrees, se 0, while the figure is pure
// chance): there the se is at least the one stochastic rounding's own
// variance gives, sqrt(sum_i S_i^2 |S_i| ulp_i) / Q (each element's arrival
// is a sum of ulp-sized Bernoulli steps, variance >= |S_i| ulp_i).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace plab {

constexpr int kLostGroups = 16;

struct UpdateStatsOptions {
  int64_t window = 20;                    // K; 0 = no windowed measurement
  int64_t maxTrackedPerTensor = 1 << 16;  // larger tensors are sampled with an even stride
};

struct LayerUpdateStats {
  std::string layer;
  int64_t numel = 0;
  int64_t intendedNonZero = 0;
  int64_t roundedAway = 0;
  double intendedNormSq = 0;   // ||intended update||^2
  double effectiveNormSq = 0;  // ||stored_after - stored_before||^2
};

struct LayerWindowStats {
  std::string layer;
  double residualDotIntended = 0;  // <A + P - S, S>
  double intendedSumSq = 0;       // ||S||^2
  double residualSq = 0;          // ||A - S||^2
  double pendingDotIntended = 0;  // <P, S>
  int64_t trackedElements = 0;
  std::array<double, kLostGroups> groupResidualDotIntended{};  // R_g
  std::array<double, kLostGroups> groupIntendedSumSq{};        // Q_g
  double stochasticVarianceTerm = 0;  // sum S_i^2 |S_i| ulp_i, stochastic rounding only
  double noiseSq = 0;                 // ||A + P - S||^2
  // Moment error (quantized moment stores only; momentsMeasured false
  // elsewhere): summed over the window's steps and the layer's elements,
  // ||stored - exact||^2 and ||exact||^2 of m and of v, where exact is the
  // fp32 moment the step computed from the previous stored moment and the
  // gradient and stored what the next step reads (kernels/quantized_adamw.h).
  bool momentsMeasured = false;
  double momentErrorSq[2] = {0, 0};  // m, v
  double momentSq[2] = {0, 0};
  double updateLost() const;     // 0 when nothing was intended
  double updateError() const;    // 0 when nothing was intended
  double updateNoise() const;    // 0 when nothing was intended
  double updatePending() const;  // 0 when nothing was intended
  double updateLostStdError() const;  // 0 when nothing was intended
  // ||stored - exact|| / ||exact|| of moment 0 (m) or 1 (v) over the window;
  // 0 when the exact moments were all zero; unset unless momentsMeasured.
  std::optional<double> momentError(int moment) const;
};

struct OptimizerStepStats {
  std::vector<LayerUpdateStats> layers;  // empty unless collectStats
  std::vector<LayerWindowStats> window;  // non-empty on steps that close a window
};

// Sums the per-layer terms into one entry named `name`.
LayerUpdateStats totalOf(const std::vector<LayerUpdateStats>& layers, const std::string& name = "");
LayerWindowStats totalOf(const std::vector<LayerWindowStats>& layers, const std::string& name = "");

// The window terms as UpdateWindow::close() returns them, one row of
// kWindowTerms doubles; adds them into `stats`.
constexpr int kWindowTerms = 7 + 2 * kLostGroups;
void addWindowTerms(LayerWindowStats& stats, const double* row);

// The minimum-evidence rule for an update-lost figure: it is shown only
// when its standard error is at most kMaxLostStdError (5 percentage points
// of the 0..100 % scale, so that its 95 % interval is about +-10 points)
// and something was intended. Otherwise the figure is noise at this size
// and the reason says why.
constexpr double kMaxLostStdError = 0.05;
struct LostEvidence {
  bool enough = true;
  std::string reason;  // empty when enough
};
// stdError unset: recorded before uncertainties were (old run folders): shown, no reason.
LostEvidence lostEvidence(std::optional<double> stdError, int64_t elements, bool intended = true);

}  // namespace plab
