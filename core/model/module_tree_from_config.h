#pragma once
// The module tree of a model computed from its config alone (names, class
// names, parameter counts), identical to describeModules() of the built
// model but without allocating any weight: inspecting a 7 B model costs
// microseconds and no memory. Torch-free.
#include "model/model_config.h"
#include "model/module_tree.h"

namespace plab {

ModuleNode describeModulesFromConfig(const ModelConfig& config);

}  // namespace plab
