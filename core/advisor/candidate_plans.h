#pragma once
// Candidate plans along the memory frontier, built from the shadow figures.
// A candidate is a run-wide mode over an all-bf16 plan, with fp32 overrides
// for the layers that mode's write does not rescue in shadow, or with a
// compensated recipe (stochastic rounding, Kahan) for just those layers
// (PrecisionPlan::recipes) and plain nearest writes for the rest. Torch-free.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "advisor/advisor.h"
#include "model/module_tree.h"

namespace plab {

// A layer the write loses too much of: more than `threshold` of its
// intended update and more than twice the figure's standard error.
bool layerAtRisk(double lost, double se, double threshold);

// The layers a write (the bf16 recipe `mode`) loses too much of.
std::vector<std::string> layersAtRisk(const std::vector<LayerShadowFigures>& layers, OptimizerMode mode,
                                      double threshold);

// The candidates, from least to most predicted state memory, duplicates
// dropped: each bf16 write (nearest, stochastic, Kahan) over every layer;
// each with fp32 for its layers at risk; and nearest writes with stochastic
// rounding or Kahan for the layers nearest writes put at risk. Layers at
// risk are taken at shares threshold, 50 % and 90 % (a set that is empty
// or every layer is left out). `base` gives everything but mode and plan.
// Fills config, fp32Layers, layerRecipes, stateBytes, memorySaved,
// predictedUpdateLost, layersAtRisk and compensatedElements.
std::vector<AdvisorCandidate> buildCandidates(const RunConfig& base, const ModuleNode& tree,
                                              const std::vector<LayerShadowFigures>& layers, double threshold);

// The shadow's update lost over the layers not in fp32Layers, each under its
// own write (layerRecipes, else `mode`'s), weighted by parameter count over
// all layers (fp32 ones lose nothing); unset without figures.
std::optional<double> predictedUpdateLost(const ModuleNode& tree, const std::vector<LayerShadowFigures>& layers,
                                          OptimizerMode mode, const std::vector<std::string>& fp32Layers,
                                          const std::map<std::string, OptimizerMode>& layerRecipes = {});

// Predicted weights + gradients + optimizer state of fp32 AdamW on the tree.
int64_t fp32StateBytes(const ModuleNode& tree, const AdamWOptions& options);

}  // namespace plab
