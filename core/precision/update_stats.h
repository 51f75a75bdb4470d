#pragma once
// What the optimizer reports about its updates. Torch-free.
//
// Per step, on the weights the forward pass uses (the bf16 copy in mixed
// mode): "rounded away" = elements whose intended update was non-zero but
// whose stored weight did not change. Kahan and stochastic rounding keep
// this high by design (the write is deferred or randomised), so it alone
// cannot tell them from plain bf16.
//
// Over a window of K steps: with A = w_t - w_(t-K) (what arrived) and
// S = the sum of the K intended updates,
//   update lost  = 1 - <A, S> / ||S||^2 = -<A - S, S> / ||S||^2
//                  (the share of S that did not arrive; negative when more
//                  arrived than intended)
//   update error = ||A - S|| / ||S||      (also counts unbiased noise, e.g. of
//                  stochastic rounding, which averages out over steps)
// fp32 reads exactly 0 on both: its intended update is its own change.
#include <cstdint>
#include <string>
#include <vector>

namespace plab {

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
  double residualDotIntended = 0;  // <A - S, S>
  double intendedSumSq = 0;       // ||S||^2
  double residualSq = 0;          // ||A - S||^2
  int64_t trackedElements = 0;
  double updateLost() const;   // 0 when nothing was intended
  double updateError() const;  // 0 when nothing was intended
};

struct OptimizerStepStats {
  std::vector<LayerUpdateStats> layers;  // empty unless collectStats
  std::vector<LayerWindowStats> window;  // non-empty on steps that close a window
};

// Sums the per-layer terms into one entry named `name`.
LayerUpdateStats totalOf(const std::vector<LayerUpdateStats>& layers, const std::string& name = "");
LayerWindowStats totalOf(const std::vector<LayerWindowStats>& layers, const std::string& name = "");

}  // namespace plab
