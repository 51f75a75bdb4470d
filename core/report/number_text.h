#pragma once
// How report numbers are written (HTML, PDF, verdicts). Losses of runs that
// are compared differ in the third or fourth decimal (2.6021 vs 2.6029), so
// they keep four decimals, more when small; %g-style rounding to a few
// significant digits would print both as 2.6. Torch-free.
#include <string>

namespace plab::report {

// 2.60213 -> "2.6021"; 0.00123 -> "0.001230" (at least 3 significant digits); NaN -> "nan".
std::string lossText(double v);
// A loss difference with its sign: 0.06 -> "+0.0600".
std::string lossDeltaText(double v);

}  // namespace plab::report
