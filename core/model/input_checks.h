#pragma once
// Validation of forward() inputs shared by the model implementations, so a
// bad batch gives a ModelError instead of an out-of-range crash deep in torch.
#include <torch/torch.h>

#include "model/model_config.h"

namespace plab {

void checkInputIds(const torch::Tensor& input_ids, const ModelConfig& config);

}  // namespace plab
