#include "precision/fp16_eps.h"

#include <cmath>
#include <cstdio>

#include "precision/kernels/fp16_bits.h"

namespace plab {
namespace {

std::string numText(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", v);
  return buf;
}

}  // namespace

Fp16EpsCheck checkFp16Eps(OptimizerMode mode, const AdamWOptions& o) {
  Fp16EpsCheck c;
  c.applies = mode == OptimizerMode::Fp16Plain;
  if (!c.applies) return c;
  // eps as the step holds it: the Python float taken to fp32, then to fp16.
  c.epsInFp16 = kernels::fp16ToFloat(kernels::fp16FromFloat(static_cast<float>(o.eps)));
  c.underflowBelow = o.beta2 < 1 ? std::sqrt(std::ldexp(1.0, -25) / (1 - o.beta2)) : 0.0;
  c.dividesByZero = c.epsInFp16 == 0;
  if (!c.dividesByZero) c.largestStepOverLr = c.underflowBelow / c.epsInFp16;
  return c;
}

std::string fp16EpsWarning(OptimizerMode mode, const AdamWOptions& o) {
  const Fp16EpsCheck c = checkFp16Eps(mode, o);
  if (!c.dividesByZero) return "";
  return "mode fp16 divides by zero: adamw.eps " + numText(o.eps) +
         " rounds to 0 in fp16 (its smallest value is 6.0e-08; anything up to 3.0e-08 becomes 0), and "
         "v = (1 - beta2) g^2 rounds to 0 for every gradient element below " + numText(c.underflowBelow) +
         ", so that element's step m / (sqrt(v) + eps) is Inf or NaN: expect a NaN loss from step 2. Set adamw.eps "
         "to 1e-4 (anything from 6e-08 avoids the division by zero, but an element whose v underflowed then steps "
         "up to lr x " + numText(c.underflowBelow) + " / eps; eps >= " + numText(c.underflowBelow) + " keeps that within lr)";
}

std::string fp16EpsCause(OptimizerMode mode, const AdamWOptions& o) {
  const Fp16EpsCheck c = checkFp16Eps(mode, o);
  if (!c.dividesByZero) return "";
  return "; adamw.eps " + numText(o.eps) + " is 0 in fp16, so AdamW divided by zero where v underflowed (gradient "
         "elements below " + numText(c.underflowBelow) + "): set adamw.eps to 1e-4";
}

}  // namespace plab
