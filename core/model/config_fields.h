#pragma once
// The typed fields of transformers 5.24's config classes (GPT2Config,
// LlamaConfig, MistralConfig, Qwen2Config, Qwen3Config and their base,
// PreTrainedConfig): transformers refuses a config.json whose field has
// another JSON type (its @strict dataclasses: 64.0 for an int, 0 for a
// float, 1 for a bool, "0" for a token id), and so does the project, with
// the same reason. Fields outside these lists are transformers' free
// keyword arguments, never type-checked. Torch-free.
#include <string>

#include <nlohmann/json.hpp>

namespace plab {

// Throws ConfigError naming the first field of `config` whose value has a
// type that transformers' class for `modelType` refuses.
void checkConfigFieldTypes(const nlohmann::json& config, const std::string& modelType);

}  // namespace plab
