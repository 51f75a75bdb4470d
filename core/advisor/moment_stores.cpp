#include "advisor/moment_stores.h"

#include <algorithm>
#include <cmath>
#include <map>

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

// Path -> own parameter count of every module of `n`.
void collectOwn(const ModuleNode& n, std::map<std::string, int64_t>& out) {
  out[n.path] = n.ownParameters;
  for (const ModuleNode& c : n.children) collectOwn(c, out);
}
std::map<std::string, int64_t> ownParameters(const ModuleNode& n) {
  std::map<std::string, int64_t> out;
  collectOwn(n, out);
  return out;
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
  c.config.plan.moments.clear();  // every layer
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
  c.layerMomentError.clear();
  c.rejected.clear();
  return c;
}

AdvisorCandidate withMomentStoreOn(const AdvisorCandidate& plan, MomentPrecision store,
                                   const std::vector<std::string>& layers, const ModuleNode& tree, int64_t fp32Bytes) {
  AdvisorCandidate c = withMomentStore(plan, store, tree, fp32Bytes);
  const std::string id = momentPrecisionId(store);
  c.config.adamw.moments = plan.config.adamw.moments;
  c.config.plan.moments.clear();
  for (const std::string& layer : layers) c.config.plan.setMomentSubtree(layer, store);
  c.name = plan.name + ", " + id + " moments on " + std::to_string(layers.size()) + " layers";
  c.description = plan.description + "; m and v in the " + id + " store (torchao's) on the " +
                  std::to_string(layers.size()) + " layers with the smallest moment error under " + id +
                  " run-wide, the plan's own moments elsewhere";
  c.stateBytes = estimateMemory(tree, c.config.plan, c.config.mode, c.config.adamw).total();
  c.memorySaved = fp32Bytes > 0 ? 1.0 - double(c.stateBytes) / double(fp32Bytes) : 0.0;
  return c;
}

std::vector<std::string> lowestMomentErrorLayers(const AdvisorCandidate& runWide, const ModuleNode& tree) {
  const std::map<std::string, int64_t> own = ownParameters(tree);
  std::vector<std::pair<double, std::string>> byError;
  for (const auto& [layer, error] : runWide.layerMomentError) {
    const auto it = own.find(layer);
    if (std::isfinite(error) && it != own.end() && it->second >= kernels::kDynamicTreeMinElements)
      byError.emplace_back(error, layer);
  }
  std::sort(byError.begin(), byError.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < byError.size() / 2; ++i) out.push_back(byError[i].second);
  return out;
}

MomentPrecision variantStore(const AdvisorCandidate& v) {
  return v.config.plan.moments.empty() ? v.config.adamw.moments : v.config.plan.moments.begin()->second;
}

std::string variantLabel(const AdvisorCandidate& v) {
  std::string label = momentPrecisionId(variantStore(v)) + " moments";
  if (!v.config.plan.moments.empty()) label += " on " + std::to_string(v.config.plan.moments.size()) + " layers";
  return label;
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
  if (variant.config.plan.moments.empty() && variant.config.adamw.moments == plan.config.adamw.moments)
    return "not tried: the plan already stores its moments so";
  // No module owns enough elements for one tensor of it to pass torchao's
  // size rule (a tensor holds at most its module's own elements).
  if (largestOwnParameters(tree) < kernels::kDynamicTreeMinElements)
    return "not tried: saves no byte on this model (no tensor large enough to quantize, torchao's size rule)";
  for (const AdvisorCandidate& c : confirmed)
    if (c.stateBytes <= variant.stateBytes && withinTolerance(c, tolerance))
      return "not tried: " + variantLabel(c) + " store " +
             (c.stateBytes < variant.stateBytes ? "fewer bytes" : "as few bytes") + " (state saved " +
             report::percentText(c.memorySaved, 1) + " as allocated vs " + report::percentText(variant.memorySaved, 1) +
             (variant.config.plan.moments.empty() ? " by the module-tree estimate"
                                                  : " estimated from the run-wide store's measured saving") +
             ") and are within the tolerance";
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
  // Part of the model: each store over the tolerance run-wide on the half
  // of its layers that its own runs measured least disturbed.
  std::vector<AdvisorCandidate> partial;
  for (const AdvisorCandidate& v : variants) {
    if (v.valLoss.empty() || !v.lossVsFp32 || withinTolerance(v, tolerance)) continue;
    const std::vector<std::string> layers = lowestMomentErrorLayers(v, tree);
    if (layers.empty()) continue;
    AdvisorCandidate p = withMomentStoreOn(plan, variantStore(v), layers, tree, fp32Bytes);
    // Its bytes before its runs: the run-wide store's measured saving, by
    // the chosen layers' share of the measured layers' elements (the
    // module-tree estimate adds a module's weight and bias together, and
    // misses quantized weights whose module is not whole blocks).
    const std::map<std::string, int64_t> own = ownParameters(tree);
    int64_t chosenElements = 0, measuredElements = 0;
    for (const auto& [layer, error] : v.layerMomentError)
      if (own.count(layer) && own.at(layer) >= kernels::kDynamicTreeMinElements) measuredElements += own.at(layer);
    for (const std::string& layer : layers) chosenElements += own.at(layer);
    const int64_t planBytes = plan.measuredStateBytes.value_or(plan.stateBytes);
    if (measuredElements > 0 && planBytes > v.stateBytes) {
      p.stateBytes = planBytes - static_cast<int64_t>(std::llround(double(planBytes - v.stateBytes) *
                                                                    double(chosenElements) / double(measuredElements)));
      p.memorySaved = fp32Bytes > 0 ? 1.0 - double(p.stateBytes) / double(fp32Bytes) : 0.0;
    }
    p.rejected = momentStoreSkipReason(plan, p, tree, confirmed, tolerance);
    if (p.rejected.empty()) {
      confirm(p);
      if (p.measuredStateBytes) {
        p.stateBytes = *p.measuredStateBytes;
        p.memorySaved = fp32Bytes > 0 ? 1.0 - double(p.stateBytes) / double(fp32Bytes) : 0.0;
      }
      confirmed.push_back(p);
    }
    partial.push_back(std::move(p));
  }
  variants.insert(variants.end(), partial.begin(), partial.end());
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
    v.store = variantStore(c);
    for (const auto& [layer, store] : c.config.plan.moments) v.layers.push_back(layer);
    v.stateBytes = c.stateBytes;
    v.bytesSaved = plan.measuredStateBytes.value_or(plan.stateBytes) - c.stateBytes;
    v.memorySaved = c.memorySaved;
    v.confirmed = !c.valLoss.empty() && c.lossVsFp32.has_value();
    v.inPlan = chosen && chosen->name == c.name && chosen->config.adamw.moments == c.config.adamw.moments &&
               chosen->config.plan.moments == c.config.plan.moments;
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
    // A part of the model names its layers first (readers that show the reason alone show them too).
    if (!v.layers.empty()) {
      std::string layers;
      for (const std::string& l : v.layers) layers += (layers.empty() ? "" : ", ") + l;
      v.reason = "on " + layers + " (the plan's own moments elsewhere): " + v.reason;
    }
    out.push_back(std::move(v));
  }
  return out;
}

std::string momentStoreVerdictLine(const MomentStoreVerdict& v) {
  std::string label = momentPrecisionId(v.store) + " moments";
  if (!v.layers.empty()) label += " on " + std::to_string(v.layers.size()) + " layers";  // the reason names them
  return label + ": " + v.reason;
}

}  // namespace plab
