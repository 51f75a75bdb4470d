#pragma once
// Candidate plans along the memory frontier, built from the shadow figures.
// The optimizer's write rule is run-wide (the mode) and the plan chooses
// fp32 or bf16 per module, so a candidate is a mode over an all-bf16 plan
// plus fp32 overrides for the layers that mode's write does not rescue in
// shadow. Torch-free.
#include <optional>
#include <string>
#include <vector>

#include "advisor/advisor.h"
#include "model/module_tree.h"

namespace plab {

// A layer the write loses too much of: more than `threshold` of its
// intended update and more than twice the figure's standard error.
bool layerAtRisk(double lost, double se, double threshold);

// Per write rule, the layers at risk (advisor order: nearest, stochastic, kahan).
std::vector<std::string> layersAtRisk(const std::vector<LayerShadowFigures>& layers, OptimizerMode mode,
                                      double threshold);

// The candidates, from least to most predicted state memory, duplicates
// dropped: each bf16 write (nearest, stochastic, Kahan) over every layer,
// and each with fp32 for its layers at risk at shares threshold, 50 % and
// 90 % (a set that is empty or every layer is left out). `base` gives everything but
// mode and plan. Fills config, fp32Layers, stateBytes and memorySaved.
std::vector<AdvisorCandidate> buildCandidates(const RunConfig& base, const ModuleNode& tree,
                                              const std::vector<LayerShadowFigures>& layers, double threshold);

// The shadow's update lost of `mode`'s write over the layers not in
// fp32Layers, weighted by parameter count over all layers (fp32 ones lose
// nothing); unset without figures.
std::optional<double> predictedUpdateLost(const ModuleNode& tree, const std::vector<LayerShadowFigures>& layers,
                                          OptimizerMode mode, const std::vector<std::string>& fp32Layers);

// Predicted weights + gradients + optimizer state of fp32 AdamW on the tree.
int64_t fp32StateBytes(const ModuleNode& tree, const AdamWOptions& options);

}  // namespace plab
