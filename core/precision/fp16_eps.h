#pragma once
// Whether mode "fp16"'s AdamW divides by zero. That mode computes every
// optimizer operation in fp16, as torch does on fp16 parameters: the second
// moment v = fp16(β2·v + (1 − β2)·g²) rounds to 0 wherever (1 − β2)·g² is at
// most 2^-25 (half of fp16's smallest subnormal, 2^-24 ≈ 6.0e-8; the tie goes
// to 0), i.e. for every gradient element below g0 = √(2^-25 / (1 − β2))
// (5.5e-3 at β2 = 0.999, a common size). Such an element steps by
// lr·m̂ / (√v̂ + eps) = lr·m̂ / fp16(eps), and fp16 rounds any eps ≤ 2^-25 ≈ 3.0e-8
// to 0 — the default 1e-8 among them: m̂/0 is ±Inf (0/0 NaN), the weights
// turn Inf/NaN in the first step and the loss is NaN from the second.
// An eps that fp16 holds avoids the division by zero; the step of an
// element whose v underflowed is then up to lr·g0 / eps (55 lr at eps 1e-4,
// lr once eps ≥ g0), against Adam's usual lr or less. Torch-free.
#include <string>

#include "precision/optimizer_mode.h"

namespace plab {

struct Fp16EpsCheck {
  bool applies = false;        // mode fp16 (the fp16 optimizer arithmetic)
  double epsInFp16 = 0;        // fp16(eps)
  double underflowBelow = 0;   // g0: |g| below it leaves v at 0
  bool dividesByZero = false;  // fp16(eps) == 0
  double largestStepOverLr = 0;  // g0 / fp16(eps) when it does not divide by zero
};
Fp16EpsCheck checkFp16Eps(OptimizerMode mode, const AdamWOptions& o);

// For the run log before the first step: "" when mode fp16 does not divide
// by zero, else why and the fix.
std::string fp16EpsWarning(OptimizerMode mode, const AdamWOptions& o);
// Appended to a NaN/Inf loss's error in mode fp16 when eps is the cause ("" otherwise).
std::string fp16EpsCause(OptimizerMode mode, const AdamWOptions& o);

}  // namespace plab
