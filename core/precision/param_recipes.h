#pragma once
// What a run's parameters say about their recipes once a plan has given
// some bf16 layers their own (PrecisionPlan::recipes): the figures the run
// info and the update-lost windows report.
#include <set>
#include <string>
#include <vector>

#include "precision/precision_adamw.h"

namespace plab {

// What the low-precision layers' moments really are: one id, or the ids
// joined by "+" in first-seen order where the layers' recipes store them
// differently ("bf16+fp32"); without low-precision layers, fp32's.
std::string momentPrecisionOf(const std::vector<TrainableParam>& params, OptimizerMode mode,
                              const AdamWOptions& options);

// The layers whose recipe holds what its writes have not applied yet
// (Kahan's buffer, a master copy).
std::set<std::string> layersHoldingPending(const std::vector<TrainableParam>& params, OptimizerMode mode);

}  // namespace plab
