#include "advisor/moment_stores.h"

#include <algorithm>
#include <cmath>

#include "advisor/candidate_choice.h"
#include "precision/kernels/dynamic_tree_8bit.h"
#include "precision/memory_estimate.h"
#include "report/number_text.h"

namespace plab {
namespace {

std::string nats(double v) { return report::signedFixedText(v, 4); }

// "+0.0044 nats vs fp32 (95 % CI +0.0037 to +0.0051, beyond seed noise)"
std::string gapText(const AdvisorCandidate& c) {
  std::string text = nats(*c.lossVsFp32) + " nats vs fp32 (95 % CI " + nats(c.ciLow) + " to " + nats(c.ciHigh);
  if (c.valLoss.size() >= 2) text += (c.ciLow > 0 || c.ciHigh < 0) ? ", beyond seed noise" : ", within seed noise";
  return text + ")";
}

std::string momentErrorText(const AdvisorCandidate& c) {
  if (!c.momentErrorM && !c.momentErrorV) return "";
  return "; moment error m " + (c.momentErrorM ? report::percentText(*c.momentErrorM, 2) : std::string("–")) + ", v " +
         (c.momentErrorV ? report::percentText(*c.momentErrorV, 2) : std::string("–"));
}

int64_t largestOwnParameters(const ModuleNode& n) {
  int64_t most = n.ownParameters;
  for (const ModuleNode& c : n.children) most = std::max(most, largestOwnParameters(c));
  return most;
}

// "0.42 MiB more than bf16-sr with its own moments (state saved 60.5 % vs 50.0 %)"
std::string savingText(const AdvisorCandidate& plan, const AdvisorCandidate& v) {
  const int64_t saved = plan.measuredStateBytes.value_or(plan.stateBytes) - v.stateBytes;
  const std::string amount = saved < (int64_t{1} << 20) ? std::to_string(saved) + " bytes" : report::mibText(saved);
  return amount + " more than " + plan.name +
         " with its own moments (state saved " + report::percentText(v.memorySaved, 1) + " vs " +
         report::percentText(plan.memorySaved, 1) + ")";
}

}  // namespace

AdvisorCandidate withMomentStore(const AdvisorCandidate& plan, MomentPrecision store, const ModuleNode& tree,
                                 int64_t fp32Bytes) {
  AdvisorCandidate c = plan;
  const std::string id = momentPrecisionId(store);
  c.name = plan.name + ", " + id + " moments";
  c.description = plan.description + "; m and v in the " + id + " store (torchao's), every parameter";
  c.config.adamw.moments = store;
  c.stateBytes = estimateMemory(tree, c.config.plan, c.config.mode, c.config.adamw).total();
  c.memorySaved = fp32Bytes > 0 ? 1.0 - double(c.stateBytes) / double(fp32Bytes) : 0.0;
  c.valLoss.clear();
  c.tokensPerSecond.clear();
  c.lossVsFp32.reset();
  c.ciLow = c.ciHigh = 0;
  c.trainingPeakBytes.reset();
  c.measuredStateBytes.reset();  // the plan's runs' bytes are not the store's
  c.measuredUpdateLost.reset();
  c.measuredUpdateLostSe.reset();
  c.momentErrorM.reset();
  c.momentErrorV.reset();
  c.rejected.clear();
  return c;
}

std::vector<AdvisorCandidate> momentStoreVariants(const AdvisorCandidate& plan,
                                                  const std::vector<MomentPrecision>& stores, const ModuleNode& tree,
                                                  int64_t fp32Bytes) {
  std::vector<AdvisorCandidate> out;
  for (MomentPrecision s : stores) out.push_back(withMomentStore(plan, s, tree, fp32Bytes));
  std::stable_sort(out.begin(), out.end(),
                   [](const AdvisorCandidate& a, const AdvisorCandidate& b) { return a.stateBytes < b.stateBytes; });
  return out;
}

std::string momentStoreSkipReason(const AdvisorCandidate& plan, const AdvisorCandidate& variant, const ModuleNode& tree,
                                  const std::vector<AdvisorCandidate>& confirmed, double tolerance) {
  if (!modeHasMomentChoice(plan.config.mode))
    return "not tried: the plan's recipe (" + optimizerModeId(plan.config.mode) + ") has no moment choice";
  if (variant.config.adamw.moments == plan.config.adamw.moments) return "not tried: the plan already stores its moments so";
  // No module owns enough elements for one tensor of it to pass torchao's
  // size rule (a tensor holds at most its module's own elements).
  if (largestOwnParameters(tree) < kernels::kDynamicTreeMinElements)
    return "not tried: saves no byte on this model (no tensor large enough to quantize, torchao's size rule)";
  for (const AdvisorCandidate& c : confirmed)
    if (c.stateBytes <= variant.stateBytes && withinTolerance(c, tolerance))
      return "not tried: " + momentPrecisionId(c.config.adamw.moments) + " moments store " +
             (c.stateBytes < variant.stateBytes ? "fewer bytes" : "as few bytes") + " (state saved " +
             report::percentText(c.memorySaved, 1) + " as allocated vs " + report::percentText(variant.memorySaved, 1) +
             " by the module-tree estimate) and are within the tolerance";
  return "";
}

std::vector<AdvisorCandidate> tryMomentStores(const AdvisorCandidate& plan, const std::vector<MomentPrecision>& stores,
                                              const ModuleNode& tree, int64_t fp32Bytes, double tolerance,
                                              const std::function<void(AdvisorCandidate&)>& confirm) {
  std::vector<AdvisorCandidate> variants = momentStoreVariants(plan, stores, tree, fp32Bytes);
  std::vector<AdvisorCandidate> confirmed;
  for (AdvisorCandidate& v : variants) {
    v.rejected = momentStoreSkipReason(plan, v, tree, confirmed, tolerance);
    if (!v.rejected.empty()) continue;
    confirm(v);
    // The bytes as allocated: the estimate adds a module's tensors together
    // (a weight and its bias), which torchao's per-tensor size rule does not.
    if (v.measuredStateBytes) {
      v.stateBytes = *v.measuredStateBytes;
      v.memorySaved = fp32Bytes > 0 ? 1.0 - double(v.stateBytes) / double(fp32Bytes) : 0.0;
    }
    confirmed.push_back(v);
  }
  return variants;
}

std::vector<MomentStoreVerdict> momentStoreVerdicts(const AdvisorCandidate& plan,
                                                    const std::vector<AdvisorCandidate>& variants,
                                                    const std::vector<AdvisorCandidate>& candidates, int chosenIndex,
                                                    double tolerance) {
  const AdvisorCandidate* chosen =
      chosenIndex >= 0 && chosenIndex < static_cast<int>(candidates.size()) ? &candidates[size_t(chosenIndex)] : nullptr;
  std::vector<MomentStoreVerdict> out;
  for (AdvisorCandidate c : variants) {
    // The choice's reason for a confirmed variant is on its copy among the candidates.
    if (!c.valLoss.empty())
      for (const AdvisorCandidate& k : candidates)
        if (k.name == c.name) c.rejected = k.rejected;
    MomentStoreVerdict v;
    v.store = c.config.adamw.moments;
    v.stateBytes = c.stateBytes;
    v.bytesSaved = plan.measuredStateBytes.value_or(plan.stateBytes) - c.stateBytes;
    v.memorySaved = c.memorySaved;
    v.confirmed = !c.valLoss.empty() && c.lossVsFp32.has_value();
    v.inPlan = chosen && chosen->name == c.name && chosen->config.adamw.moments == c.config.adamw.moments;
    if (v.confirmed) {
      v.lossVsFp32 = c.lossVsFp32;
      v.ciLow = c.ciLow;
      v.ciHigh = c.ciHigh;
    }
    v.momentErrorM = c.momentErrorM;
    v.momentErrorV = c.momentErrorV;
    if (v.inPlan) {
      v.reason = "in the plan: saves " + savingText(plan, c) + "; loss " + gapText(c) + ", within the tolerance " +
                 report::fixedText(tolerance, 4) + momentErrorText(c);
    } else if (!v.confirmed) {
      const bool skipped = c.rejected.rfind("not tried", 0) == 0;  // momentStoreSkipReason's words
      v.reason = skipped ? c.rejected : "left out: " + (c.rejected.empty() ? std::string("not confirmed") : c.rejected);
    } else if (*c.lossVsFp32 > tolerance) {  // (the choice's reason makes withinTolerance false for every loser)
      v.reason = "left out: loss " + gapText(c) + ", over the tolerance " + report::fixedText(tolerance, 4) + " by " +
                 report::fixedText(*c.lossVsFp32 - tolerance, 4) + " (it would save " + savingText(plan, c) + ")" +
                 momentErrorText(c);
    } else {
      v.reason = "left out: loss " + gapText(c) + "; " + c.rejected + momentErrorText(c);
    }
    out.push_back(std::move(v));
  }
  return out;
}

std::string momentStoreVerdictLine(const MomentStoreVerdict& v) {
  return momentPrecisionId(v.store) + " moments: " + v.reason;
}

}  // namespace plab
