#pragma once
// Learning-rate schedule of a run: linear warmup, then constant or cosine
// decay to min_lr_ratio * lr at the last step. Torch-free.
#include <cstdint>

#include "train/run_config.h"

namespace plab {

// lr for the 1-based optimizer step.
double scheduledLr(const RunConfig& config, int64_t step);

}  // namespace plab
