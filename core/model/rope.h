#pragma once
// Rotary position embedding frequencies with the rope_scaling variants of
// Hugging Face transformers (modeling_rope_utils): default, linear, llama3
// and yarn. Computed with fp32 tensor ops in the same order as transformers
// so that logits match it.
#include <torch/torch.h>

#include "model/model_config.h"

namespace plab {

struct RopeFrequencies {
  torch::Tensor invFreq;         // [head_dim / 2] fp32
  double attentionScaling = 1.0; // cos and sin are multiplied by it (yarn)
};

RopeFrequencies ropeFrequencies(const ModelConfig& c, const torch::Device& device);

}  // namespace plab
