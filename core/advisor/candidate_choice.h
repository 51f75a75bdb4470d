#pragma once
// Which confirmed candidate the advisor chooses, and why each other one is
// not chosen. Torch-free and pure, so a constructed set of candidates can be
// judged in a test.
//
// The rule: the least state memory within the tolerance; among candidates
// with the same state bytes (every bf16 write rule saves the same bytes),
// the lower mean loss vs fp32 — the user asked for the loss, and a
// compensated write costs compute, not memory. The compute a candidate adds
// (compensatedElements, measured tokens/s) is reported beside it, not used
// to choose. Only exactly equal losses fall back to the shadow's figures:
// fewer layers at risk, then fewer compensated elements, then less update
// lost (shadow, then measured).
#include <string>
#include <vector>

#include "advisor/advisor.h"

namespace plab {

// Index of the chosen candidate (-1: none within tolerance); every other
// confirmed candidate's `rejected` is set to its reason.
int chooseCandidate(std::vector<AdvisorCandidate>& candidates, double tolerance);

// A candidate within the tolerance: confirmed without a failed run, mean
// paired gap to fp32 at most `tolerance`.
bool withinTolerance(const AdvisorCandidate& c, double tolerance);

// "12,288 compensated elements, 5,120 tokens/s": the compute figure reported
// beside the loss ("no compensated element" when none; tokens/s when measured).
std::string computeCostText(const AdvisorCandidate& c);

}  // namespace plab
