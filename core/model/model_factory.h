#pragma once
// Building, loading and saving models.
#include <filesystem>
#include <functional>
#include <memory>

#include "model/causal_lm.h"

namespace plab {

// Random init exactly like transformers' from_config + _init_weights
// (normal(0, initializer_range), zero biases, unit norms; GPT-2's scaled
// c_proj init), deterministic for a seed.
std::shared_ptr<CausalLM> createModel(const ModelConfig& config, uint64_t seed);

// A folder with config.json and model.safetensors (or a sharded
// model.safetensors.index.json). Weights keep their file dtype converted to
// fp32. Throws ModelError/SafetensorsError naming the file and tensor on a
// missing, extra-shaped or corrupt weight.
std::shared_ptr<CausalLM> loadPretrained(const std::filesystem::path& modelDir);

// Writes config.json + model.safetensors (tensors in their current dtype,
// tied weights once) so that loadPretrained() reads it back bit-exactly.
void saveCheckpoint(CausalLM& model, const std::filesystem::path& dir);

}  // namespace plab
