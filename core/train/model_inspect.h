#pragma once
// What the UI needs to know about a model before training it (layer tree,
// sizes), without torch headers. Implemented with the model factory.
#include <cstdint>
#include <string>

#include "model/model_config.h"
#include "model/module_tree.h"
#include "train/run_config.h"

namespace plab {

struct ModelOverview {
  ModelConfig config;
  ModuleNode modules;
  int64_t parameterCount = 0;
  std::string sourceDescription;  // "embedded tiny-gpt2", "/path/to/folder", "org/name@main (cache)"
  std::string tokenizerKind;      // "byte-level-bpe (/m/tokenizer.json)", "bytes", "none: <why>"
};

// Resolves the spec (embedded / config / folder / hub cache; never
// downloads) and builds the module tree. Throws plab::Error subclasses with
// a clear message (broken config.json, unknown architecture, not cached...).
ModelOverview inspectModel(const ModelSpec& spec);

}  // namespace plab
