#pragma once
// Tiny model configurations shared by the core tests: small enough that a
// forward/backward pass takes milliseconds on one CPU core.
#include "model/model_config.h"

namespace plab::test {

// GPT-2: vocab 61, hidden 32, 2 layers, 4 heads, 32 positions, tied embeddings.
ModelConfig tinyGpt2Config();

// Llama: vocab 61, hidden 32, 2 layers, 4 heads / 2 kv heads (GQA),
// intermediate 64, 32 positions, untied lm_head.
ModelConfig tinyLlamaConfig();

}  // namespace plab::test
