#pragma once
// The quantized moment stores in the advisor (issue 40 point 5): each store
// of AdvisorOptions::momentStores put run-wide on the plan chosen from the
// candidates, confirmed like a candidate (paired against fp32 over the
// seeds), cheapest first; then a store over the tolerance run-wide on part
// of the model: the half of its layers whose moment error its run-wide runs
// measured smallest (PrecisionPlan::moments), confirmed the same way. A
// store enters the chosen plan only when its measured gap is within the
// tolerance and no cheaper plan's is. Torch-free and pure, so a constructed
// set of figures can be judged in a test.
#include <functional>
#include <string>
#include <vector>

#include "advisor/advisor.h"
#include "model/module_tree.h"

namespace plab {

// `plan` with every parameter's moments in `store` (AdamWOptions::moments:
// torchao's rule, small tensors in their own dtype): name, description,
// config, stateBytes (codes and scales, precision/state_layout.h) and
// memorySaved; the confirmation figures cleared.
AdvisorCandidate withMomentStore(const AdvisorCandidate& plan, MomentPrecision store, const ModuleNode& tree,
                                 int64_t fp32Bytes);

// `plan` with `store` on `layers` alone (PrecisionPlan::moments; the other
// layers keep the plan's moments): name, description, config, stateBytes
// (module-tree estimate) and memorySaved; the confirmation figures cleared.
AdvisorCandidate withMomentStoreOn(const AdvisorCandidate& plan, MomentPrecision store,
                                   const std::vector<std::string>& layers, const ModuleNode& tree, int64_t fp32Bytes);

// The layers a run-wide variant's runs measured (layerMomentError) that own
// at least 4096 elements in `tree` (torchao's size rule: a smaller tensor
// keeps its own dtype and saves nothing; its "error" is that dtype's
// rounding), the half with the smallest error: the first floor(n / 2) by
// error ascending (ties by path); empty under two such layers.
std::vector<std::string> lowestMomentErrorLayers(const AdvisorCandidate& runWide, const ModuleNode& tree);

// The store a variant tried (its plan's per-layer store, else adamw.moments)
// and its label: "8bit moments", "8bit moments on 3 layers".
MomentPrecision variantStore(const AdvisorCandidate& variant);
std::string variantLabel(const AdvisorCandidate& variant);

// The variants of `plan` in the order they are tried: least state memory
// first (equal bytes keep the order of `stores`).
std::vector<AdvisorCandidate> momentStoreVariants(const AdvisorCandidate& plan,
                                                  const std::vector<MomentPrecision>& stores, const ModuleNode& tree,
                                                  int64_t fp32Bytes);

// Why `variant` (of `plan`) is not worth its runs, "" when it is: a recipe
// without a moment choice, the plan's own store, no byte saved (no module
// of `tree` owns enough elements for torchao's size rule), or an already
// confirmed store within the tolerance that stores at most as many bytes.
std::string momentStoreSkipReason(const AdvisorCandidate& plan, const AdvisorCandidate& variant, const ModuleNode& tree,
                                  const std::vector<AdvisorCandidate>& confirmed, double tolerance);

// The stage: the variants of `plan` cheapest first, each given to
// `confirm` (its runs: valLoss, lossVsFp32, measuredStateBytes,
// layerMomentError, ...) unless momentStoreSkipReason names a reason,
// which goes in its `rejected`. Then, for each run-wide variant confirmed
// over the tolerance, in that order, the store on its
// lowestMomentErrorLayers (withMomentStoreOn), confirmed unless a confirmed
// variant within the tolerance stores at most as many bytes. A confirmed
// variant's stateBytes become its measured ones. Returns every variant,
// confirmed or not: the run-wide ones cheapest first, then the partial ones.
std::vector<AdvisorCandidate> tryMomentStores(const AdvisorCandidate& plan, const std::vector<MomentPrecision>& stores,
                                              const ModuleNode& tree, int64_t fp32Bytes, double tolerance,
                                              const std::function<void(AdvisorCandidate&)>& confirm);

// One verdict per variant, after chooseCandidate over `candidates` (which
// hold the confirmed variants, matched by name): in the plan when the
// chosen candidate is that variant; else left out with the figures (its
// gap and CI, over the tolerance by how much, or the choice's reason), or
// not tried (variant.rejected, no valLoss). chosen -1: none within tolerance.
std::vector<MomentStoreVerdict> momentStoreVerdicts(const AdvisorCandidate& plan,
                                                    const std::vector<AdvisorCandidate>& variants,
                                                    const std::vector<AdvisorCandidate>& candidates, int chosen,
                                                    double tolerance);

// "8bit moments: in the plan, ..." : the verdict as a line of the log.
std::string momentStoreVerdictLine(const MomentStoreVerdict& v);

}  // namespace plab
