#pragma once
// How report numbers are written (HTML, PDF, verdicts). Losses of runs that
// are compared differ in the third or fourth decimal (2.6021 vs 2.6029), so
// they keep four decimals, more when small; %g-style rounding to a few
// significant digits would print both as 2.6. Torch-free.
#include <cstdint>
#include <string>

namespace plab::report {

// 2.60213 -> "2.6021"; 0.00123 -> "0.001230" (at least 3 significant digits); NaN -> "nan".
std::string lossText(double v);
// A loss difference with its sign: 0.06 -> "+0.0600".
std::string lossDeltaText(double v);

// The other figures, in the same words in the app, the HTML and the PDF.
std::string fixedText(double v, int decimals);  // "%.*f" without "-0.0" (a sign with no digit reads as a loss)
std::string percentText(double fraction, int decimals = 1);  // 0.5 -> "50.0 %"
std::string mibText(int64_t bytes);                           // 997888 -> "0.95 MiB"

}  // namespace plab::report
