#include "train/model_inspect.h"

#include "model/module_tree_from_config.h"
#include "train/model_loading.h"
#include "util/errors.h"

namespace plab {

ModelOverview inspectModel(const ModelSpec& spec) {
  const ResolvedModelSource source = resolveModelSource(spec);
  ModelOverview o;
  o.config = source.config;
  o.sourceDescription = source.description;
  try {
    tokenizerForSource(source, &o.tokenizerKind);
  } catch (const TokenizerError& e) {  // shown, not fatal: the run config can still ask for bytes
    o.tokenizerKind = std::string("none: ") + e.what();
  }
  // From the config alone: building the model would allocate every weight.
  o.modules = describeModulesFromConfig(source.config);
  o.parameterCount = source.config.parameterCount();
  return o;
}

}  // namespace plab
