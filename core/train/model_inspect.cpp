#include "train/model_inspect.h"

#include "model/module_tree_from_config.h"
#include "train/model_loading.h"
#include "train/model_memory_check.h"
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
  // The tree comes from the config alone (no weight is allocated), so any
  // real model can be listed; an absurd layer count is refused first.
  checkModelTreeSize(source.config, source.description);
  o.modules = describeModulesFromConfig(source.config);
  o.parameterCount = source.config.parameterCount();
  return o;
}

}  // namespace plab
