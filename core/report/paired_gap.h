#pragma once
// Is a recipe's gap to fp32 real or seed noise? Paired over seeds: each
// seed's run minus its own fp32 twin, so that what the seed changes (data
// order, init of the head) cancels, and a gap far smaller than the spread of
// fp32 across seeds can still be told from zero. Torch-free.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/fp32_comparison.h"

namespace plab::report {

// Mean and two-sided 95 % Student-t interval of paired differences.
struct PairedEstimate {
  int pairs = 0;  // distinct seeds
  double mean = 0, sd = 0, ciLow = 0, ciHigh = 0;
  bool beyondNoise() const { return pairs >= 2 && (ciLow > 0 || ciHigh < 0); }
};
PairedEstimate pairedEstimate(const std::vector<double>& differences);
double studentT975(int degreesOfFreedom);

// The gap of runs[run]'s recipe to fp32 over its seeds: every finished run
// whose config equals runs[run]'s except seed and name, each against its
// own fp32 twin (fp32TwinIndex), one per seed. Empty while runs[run] has
// not finished, for fp32 runs and without a twin.
struct PairedGap {
  std::vector<uint64_t> seeds;
  std::vector<double> differences;  // per seed, in the order of `seeds`
  PairedEstimate total;
  bool validation = true;  // every difference is a validation loss
  // The part of the gap that bf16 compute causes: the `mixed` runs (fp32
  // master, bf16 forward/backward) of the same config on the same seeds,
  // and what is left for the optimizer (this gap minus mixed's, per seed).
  std::optional<PairedEstimate> compute, optimizer;
  // The optimizer's part split further where the recipe stores its moments
  // in bf16 (bf16-nearest, bf16-kahan, bf16-sr) and the same config with
  // "adamw.moments": "fp32" ran on the same seeds (the default experiment's
  // "-fp32-moments" runs), per seed:
  //   compute = mixed − fp32             (bf16 forward and backward),
  //   write   = fp32-moments run − mixed (the bf16 weight write: what the
  //             rounding, the compensation buffer or the random bits of
  //             stochastic rounding do that an fp32 master does not),
  //   moments = this run − fp32-moments run (bf16 moment storage).
  // The three add up to this run's gap seed by seed (a telescoping sum), so
  // their means add up to the gap's mean exactly; each has its own paired
  // interval. An interaction of two causes is counted in the later part.
  struct Attribution {
    std::vector<uint64_t> seeds;
    PairedEstimate gap, compute, write, moments;
    // What the write part looks like in the runs' own figures (means over
    // those seeds' runs of this recipe; unset where not recorded): update
    // lost (a bias) and update noise (precision/update_stats.h).
    std::optional<double> updateLost, updateNoise;
  };
  std::optional<Attribution> attribution;
};
std::optional<PairedGap> pairedGap(const std::vector<RunRecord>& runs, size_t run);
std::optional<PairedGap> pairedGap(const std::vector<RunRecord>& runs, const RunRelations& relations, size_t run);

// "over 5 seeds +0.0004 (95 % CI +0.0001 to +0.0007, paired): beyond seed
// noise; bf16 compute (mixed) +0.0003, optimizer +0.0001 (95 % CI ...)", or
// "one seed: run more seeds for a paired test". With an attribution:
// "...; over 10 seeds +0.0004 = compute +0.0001 (95 % CI ...) + weight write
// 0.0000 (...) + moments +0.0003 (...)".
std::string pairedGapText(const std::vector<RunRecord>& runs, size_t run);
std::string pairedGapText(const std::vector<RunRecord>& runs, const RunRelations& relations, size_t run);
// The attribution's line alone ("" without one): "+0.0004 = compute ... ".
std::string attributionText(const PairedGap::Attribution& a);

}  // namespace plab::report
