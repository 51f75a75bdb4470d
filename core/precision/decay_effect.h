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
// decay through; "bf16" rounds the decay step on its own and loses it as
// here. The pure-decay figures are those of weights with zero gradient or
// with Adam updates far below an ulp. How far the updates dither depends on
// lr and wd separately, not on lr·wd: the update is about lr in size, the
// decay lr·wd·|w|, the ulp |w|·2^-7 (UpdateDither below; test_decay_effect:
// N(0, 0.02) weights at lr·wd = 1e-4 keep 0.99 of fp32's decay at lr 1e-3,
// 0.15 at lr 1e-4 and 0.000 at lr 1e-5).
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
  double lr = 0;                // the step's lr, where known (0: only lr·wd given)
  double effective = 0;         // mean relative decay applied (on average, for SR and Kahan)
  double vanishedFraction = 0;  // share of weights whose decay vanishes (they never move)
};
DecayStepEffect decayStepEffect(OptimizerMode mode, double lrTimesWd);

// The Adam updates a "bf16-nearest" step rounds together with the decay.
// Each is lr·m̂/(√v̂ + ε). Under pure gradient noise (zero-mean, independent
// from step to step) m̂ has √((1 − β1)/(1 + β1)) of the gradient's standard
// deviation and √v̂ is about that deviation, so the update is about
// N(0, (0.23·lr)²) at β1 = 0.9: the smallest typical update (a consistent
// gradient moves a weight by up to lr, dithering more), so the figures
// computed from it are what survives at least.
struct UpdateDither {
  std::vector<float> weights;  // |w| of the layers' bf16 weights (a sample); empty: not known, pure decay
  double updateScale = 0;      // the update's standard deviation / lr
};
double adamNoiseUpdateScale(double beta1);  // √((1 − β1)/(1 + β1))
// A sample of |w| (any order, zeros and non-finite values dropped) reduced
// to at most 512 quantiles, with the noise scale of beta1.
UpdateDither updateDitherOf(std::vector<float> weightMagnitudes, double beta1);

// What one "bf16-nearest" step delivers to a weight of magnitude `a` (a bf16
// value), as a share of what fp32 delivers (a − fp32(a·f), f = fp32(1 − lr·wd)):
// E[bf16(fp32(a·f) + u) − bf16(a + u)] / (fp32(a·f) − a) over u ~ N(0, (scale·lr)²),
// computed exactly over the bf16 cells the update reaches. 1 once the
// update's spread exceeds two ulps of a (the rounding then averages out to
// within 1e-9), the pure-decay step's share at scale 0.
double ditheredDecayShare(float a, double lr, double weightDecay, double updateScale);

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
  double updateScale = 0;      // > 0: assessed with Adam updates of this size / lr rounded in (UpdateDither)
  int64_t atStep = 0;          // 1-based step shown: the off step losing or adding the most decay, else the peak
  DecayStepEffect at;          // that step's effect
  int64_t firstOffStep = 0;    // first step off by more than kDecayTolerance; 0: none
  double shareOff = 0;         // share of the run's intended decay in off steps
  double shareVanished = 0;    // share of the run's intended decay in vanished steps
  double runIntended = 0;      // sum of lr·wd over the run
  double runEffective = 0;     // sum of the steps' effective decays (one step each on spread weights; a
                               // weight without gradient in a nearest mode stops decaying sooner)
};

// lrAt(step) is the lr of the 1-based step, for steps 1..steps. With a
// dither (weights known), "bf16-nearest" steps are assessed with the Adam
// updates rounded in (ditheredDecayShare over the sample): `effective` is
// then lr·wd times the weights' shares weighted by w² (the decay of |w|²),
// and `vanishedFraction` the share of weights keeping less than
// kDecayTolerance of their decay. Without one, and for every other mode, pure-decay steps.
DecayAssessment assessWeightDecay(OptimizerMode mode, double weightDecay, int64_t steps,
                                  const std::function<double(int64_t)>& lrAt, const UpdateDither& dither = {});
// lrPerStep[i] is the lr of step i + 1.
DecayAssessment assessWeightDecay(OptimizerMode mode, double weightDecay, const std::vector<double>& lrPerStep,
                                  const UpdateDither& dither = {});

// One sentence for the run log and the optimizer panel; empty when fine.
// torchFused: "bf16" runs torch's fused step (adamw.torch_step), which
// rounds the decay together with the update, as bf16-nearest does; its
// pure-decay steps are the same.
std::string describeDecayAssessment(OptimizerMode mode, const DecayAssessment& a, bool torchFused = false);

nlohmann::json toJson(const DecayAssessment& a);
DecayAssessment decayAssessmentFromJson(const nlohmann::json& j);  // lenient: missing keys keep defaults

}  // namespace plab
