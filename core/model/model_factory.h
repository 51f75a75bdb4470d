#pragma once
// Building, loading and saving models.
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/causal_lm.h"

namespace plab {

// Random init exactly like transformers' from_config + _init_weights
// (normal(0, initializer_range), zero biases, unit norms; GPT-2's scaled
// c_proj init), deterministic for a seed.
std::shared_ptr<CausalLM> createModel(const ModelConfig& config, uint64_t seed);

// A folder with config.json and model.safetensors (or a sharded
// model.safetensors.index.json). Weights keep their file dtype converted to
// fp32. Throws ModelError/SafetensorsError naming the file and tensor on a
// missing, extra-shaped or corrupt weight. Where the file and config.json
// disagree it does what transformers 5 does, and says so in *warnings:
// tensors the model has no place for are not loaded (those transformers
// drops silently, old rotary inv_freq and GPT-2 mask buffers, unmentioned);
// a tied head whose file holds a different lm_head.weight is untied and
// loaded from the file.
std::shared_ptr<CausalLM> loadPretrained(const std::filesystem::path& modelDir,
                                         std::vector<std::string>* warnings = nullptr);

// Writes config.json + model.safetensors (tensors in their current dtype,
// tied weights once) so that loadPretrained() reads it back bit-exactly, and
// so does transformers' from_pretrained with its default dtype ("auto"):
// config.json's dtype / torch_dtype name the tensors' dtype, float32 when
// they mix dtypes (every one of them widens to fp32 exactly).
void saveCheckpoint(CausalLM& model, const std::filesystem::path& dir);

}  // namespace plab
