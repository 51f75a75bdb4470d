#pragma once
// What decoupled weight decay really does to the weights, mode by mode and
// over a whole lr schedule. Torch-free and deterministic: an exact
// computation over the 128 bf16 mantissas (each weighted by the share of
// log-uniformly spread real weights that round to it), not a sample.
//
// One pure-decay step (zero gradient) multiplies w by f = fp32(1 - lr·wd):
//  - "bf16", "bf16-nearest": fp32(w·f) is rounded to the nearest bf16 once
//    (torch computes bf16·scalar in fp32 and rounds once; it does not round
//    f to bf16). A weight of mantissa m in [1, 2) moves only when
//    lr·wd > about 2^-8/m, and then by a whole ulp (2^-7/m relative): below
//    2^-9 nothing decays, between 2^-9 and 2^-8 a few weights decay too much
//    and the rest not at all. (The mean over log-uniform weights is the
//    step's effect on weights that training keeps spreading; a weight with
//    no gradient decays only until its mantissa drops to 2^-8/(lr·wd) and
//    then stays, so below lr·wd = 2^-8 its decay stops altogether.)
//  - "bf16-kahan": the bf16 compensation buffer carries the decay until the
//    weight moves, but the buffer's own rounding stops it from growing once
//    the increment lr·wd·w is below half its ulp: below lr·wd of about
//    2^-17..2^-16 decay vanishes here too.
//  - "bf16-sr": unbiased, so on average the fp32 product's decay.
//  - "fp32", "mixed" (and every fp32 layer): fp32 rounding of f and of the
//    product; off by more than 10 % only below lr·wd of about 1.5e-7.
// With gradients, "bf16-nearest" and "bf16-kahan" add the decay to the Adam
// update before rounding, so where the updates span ulps they dither the
// decay through (test_decay_effect: 99 % of fp32's decay at lr·wd = 1e-4);
// "bf16" rounds the decay step on its own and loses it as here. The
// pure-decay figures are those of weights with zero gradient or with Adam
// updates below an ulp.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "precision/optimizer_mode.h"

namespace plab {

// One pure-decay step at lr·wd = intended.
struct DecayStepEffect {
  double intended = 0;          // lr·wd: the relative decay asked for
  double effective = 0;         // mean relative decay applied (on average, for SR and Kahan)
  double vanishedFraction = 0;  // share of weights whose decay vanishes (they never move)
};
DecayStepEffect decayStepEffect(OptimizerMode mode, double lrTimesWd);

enum class DecayVerdict { Fine, Distorted, Vanished };
std::string decayVerdictId(DecayVerdict v);  // "fine", "distorted", "vanished"
DecayVerdict decayVerdictFromId(const std::string& id);  // unknown ids read as Fine

// A step's decay is off when its effective decay differs from lr·wd by more
// than this fraction or more than this fraction of the weights do not decay
// at all (their share is then made up by others decaying a whole ulp), and
// vanished when less than this fraction of the decay remains.
inline constexpr double kDecayTolerance = 0.10;
// Steps that together carry no more than this share of the run's intended
// decay do not set the verdict (a cosine to zero always ends in steps whose
// decay rounds away, in fp32 too, and loses almost nothing there).
inline constexpr double kDecayMaterialShare = 0.01;

struct DecayAssessment {
  DecayVerdict verdict = DecayVerdict::Fine;
  int64_t atStep = 0;          // 1-based step shown: the off step losing or adding the most decay, else the peak
  DecayStepEffect at;          // that step's effect
  int64_t firstOffStep = 0;    // first step off by more than kDecayTolerance; 0: none
  double shareOff = 0;         // share of the run's intended decay in off steps
  double shareVanished = 0;    // share of the run's intended decay in vanished steps
  double runIntended = 0;      // sum of lr·wd over the run
  double runEffective = 0;     // sum of the steps' effective decays (one step each on spread weights; a
                               // weight without gradient in a nearest mode stops decaying sooner)
};

// lrAt(step) is the lr of the 1-based step, for steps 1..steps.
DecayAssessment assessWeightDecay(OptimizerMode mode, double weightDecay, int64_t steps,
                                  const std::function<double(int64_t)>& lrAt);
// lrPerStep[i] is the lr of step i + 1.
DecayAssessment assessWeightDecay(OptimizerMode mode, double weightDecay, const std::vector<double>& lrPerStep);

// One sentence for the run log and the optimizer panel; empty when fine.
std::string describeDecayAssessment(OptimizerMode mode, const DecayAssessment& a);

nlohmann::json toJson(const DecayAssessment& a);
DecayAssessment decayAssessmentFromJson(const nlohmann::json& j);  // lenient: missing keys keep defaults

}  // namespace plab
