#include "advisor/candidate_choice.h"

#include <cmath>

#include "report/number_text.h"
#include "report/paired_gap.h"

namespace plab {
namespace {

std::string signedNatsText(double v) { return report::signedFixedText(v, 4); }
std::string percentOf(double v) { return report::percentText(v, 1); }

// 12288 -> "12,288"
std::string grouped(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (n < 0 ? "-" : "") + out;
}

double lostOrLarge(const std::optional<double>& v) { return v ? *v : 1e300; }

// Why b is preferred to a at the same state bytes (both within tolerance).
enum class Tie { Loss, AtRisk, Compensated, Lost, None };
Tie tieBreak(const AdvisorCandidate& a, const AdvisorCandidate& b) {
  if (*a.lossVsFp32 != *b.lossVsFp32) return Tie::Loss;
  if (a.layersAtRisk != b.layersAtRisk) return Tie::AtRisk;
  if (a.compensatedElements != b.compensatedElements) return Tie::Compensated;
  if (lostOrLarge(a.predictedUpdateLost) != lostOrLarge(b.predictedUpdateLost) ||
      lostOrLarge(a.measuredUpdateLost) != lostOrLarge(b.measuredUpdateLost))
    return Tie::Lost;
  return Tie::None;
}

bool better(const AdvisorCandidate& a, const AdvisorCandidate& b) {
  switch (tieBreak(a, b)) {
    case Tie::Loss: return *a.lossVsFp32 < *b.lossVsFp32;
    case Tie::AtRisk: return a.layersAtRisk < b.layersAtRisk;
    case Tie::Compensated: return a.compensatedElements < b.compensatedElements;
    case Tie::Lost:
      if (lostOrLarge(a.predictedUpdateLost) != lostOrLarge(b.predictedUpdateLost))
        return lostOrLarge(a.predictedUpdateLost) < lostOrLarge(b.predictedUpdateLost);
      return lostOrLarge(a.measuredUpdateLost) < lostOrLarge(b.measuredUpdateLost);
    case Tie::None: return false;
  }
  return false;
}

// A plan that costs a few bytes more (a Kahan buffer on the norms) reads
// the same at one decimal: then the bytes say how much more.
std::string lessSavingReason(const AdvisorCandidate& c, const AdvisorCandidate& chosen) {
  std::string figures = percentOf(c.memorySaved) + " vs " + percentOf(chosen.memorySaved);
  if (percentOf(c.memorySaved) == percentOf(chosen.memorySaved))
    figures += ": " + std::to_string(c.stateBytes - chosen.stateBytes) + " bytes more";
  return "within tolerance, but saves less state memory than the chosen (" + figures + ")";
}

// The loss difference to the chosen, paired over the seeds both ran.
std::string pairedToChosen(const AdvisorCandidate& c, const AdvisorCandidate& chosen) {
  if (c.valLoss.size() != chosen.valLoss.size() || c.valLoss.size() < 2) return "";
  std::vector<double> d;
  for (size_t k = 0; k < c.valLoss.size(); ++k) d.push_back(c.valLoss[k] - chosen.valLoss[k]);
  const report::PairedEstimate e = report::pairedEstimate(d);
  return "; paired difference " + signedNatsText(e.mean) + ", 95 % CI " + signedNatsText(e.ciLow) + " to " +
         signedNatsText(e.ciHigh) + (e.beyondNoise() ? "" : ": within seed noise");
}

std::string tieReason(const AdvisorCandidate& c, const AdvisorCandidate& chosen) {
  const std::string head = "within tolerance and as cheap as the chosen (" + percentOf(c.memorySaved) + "), but ";
  switch (tieBreak(c, chosen)) {
    case Tie::Loss:
      return head + "its loss is higher (" + signedNatsText(*c.lossVsFp32) + " vs " + signedNatsText(*chosen.lossVsFp32) +
             " nats vs fp32" + pairedToChosen(c, chosen) + "); compute: " + computeCostText(c) + " vs " +
             computeCostText(chosen);
    case Tie::AtRisk:
      return head + "the shadow says " + std::to_string(c.layersAtRisk) +
             " of its layers lose more of their update than the risk threshold (chosen: " +
             std::to_string(chosen.layersAtRisk) + ")";
    case Tie::Compensated:
      return head + "it compensates the writes of more elements (" + std::to_string(c.compensatedElements) +
             " vs " + std::to_string(chosen.compensatedElements) + "): more work per step for the same loss";
    case Tie::Lost:
    case Tie::None: break;
  }
  const bool shadow = c.predictedUpdateLost && chosen.predictedUpdateLost;
  const double mine = shadow ? *c.predictedUpdateLost : lostOrLarge(c.measuredUpdateLost);
  const double theirs = shadow ? *chosen.predictedUpdateLost : lostOrLarge(chosen.measuredUpdateLost);
  return head + "its writes lose more of the update (" + (shadow ? "shadow " : "measured ") +
         (mine < 1e299 ? percentOf(mine) : std::string("unknown")) + " vs " +
         (theirs < 1e299 ? percentOf(theirs) : std::string("unknown")) + ")";
}

std::string overToleranceReason(const AdvisorCandidate& c, double tolerance) {
  const double loss = c.lossVsFp32.value_or(NAN);
  return "loss " + signedNatsText(loss) + " nats vs fp32: over the tolerance " + report::fixedText(tolerance, 4) + " by " +
         report::fixedText(loss - tolerance, 4);
}

}  // namespace

bool withinTolerance(const AdvisorCandidate& c, double tolerance) {
  return c.rejected.empty() && c.lossVsFp32 && *c.lossVsFp32 <= tolerance;
}

std::string computeCostText(const AdvisorCandidate& c) {
  std::string text = c.compensatedElements > 0 ? grouped(c.compensatedElements) + " compensated elements"
                                               : std::string("no compensated element");
  double sum = 0;
  int n = 0;
  for (double t : c.tokensPerSecond)
    if (std::isfinite(t) && t > 0) sum += t, ++n;
  if (n > 0) text += ", " + grouped(static_cast<int64_t>(std::llround(sum / n))) + " tokens/s";
  return text;
}

int chooseCandidate(std::vector<AdvisorCandidate>& candidates, double tolerance) {
  int chosen = -1;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const AdvisorCandidate& c = candidates[i];
    if (!withinTolerance(c, tolerance)) continue;
    if (chosen < 0) {
      chosen = static_cast<int>(i);
      continue;
    }
    const AdvisorCandidate& best = candidates[static_cast<size_t>(chosen)];
    if (c.stateBytes < best.stateBytes || (c.stateBytes == best.stateBytes && better(c, best)))
      chosen = static_cast<int>(i);
  }
  for (size_t i = 0; i < candidates.size(); ++i) {
    AdvisorCandidate& c = candidates[i];
    if (static_cast<int>(i) == chosen || !c.rejected.empty()) continue;
    if (!withinTolerance(c, tolerance)) {
      c.rejected = overToleranceReason(c, tolerance);
      continue;
    }
    const AdvisorCandidate& best = candidates.at(static_cast<size_t>(chosen));
    c.rejected = c.stateBytes > best.stateBytes ? lessSavingReason(c, best) : tieReason(c, best);
  }
  return chosen;
}

}  // namespace plab
