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
// A loss difference with its sign: 0.06 -> "+0.0600"; 0 and -0 -> "0.0000".
std::string lossDeltaText(double v);

// No text here shows a sign without a digit after it: a value that rounds to
// zero at the shown precision reads "0.00", never "-0.00" or "+0.00" (a
// minus with no digit reads as a loss or a saving that is not there).

// The other figures, in the same words in the app, the HTML and the PDF.
std::string fixedText(double v, int decimals);        // "%.*f" without "-0.0"
std::string signedFixedText(double v, int decimals);  // "%+.*f": "+0.0012", "-0.0012", "0.0000"
std::string percentText(double fraction, int decimals = 1);  // 0.5 -> "50.0 %"
std::string mibText(int64_t bytes);                           // 997888 -> "0.95 MiB"
// A saving against a baseline as the change it makes, with a true minus sign
// (U+2212): 0.5 -> "−50 %", -0.12 -> "+12 %" (more than the baseline), and
// a saving that rounds to 0 -> "0 %" (decimals 0).
std::string savingText(double savedFraction, int decimals = 1);

}  // namespace plab::report
