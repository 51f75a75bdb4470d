#include "train/model_inspect.h"

#include "model/model_factory.h"
#include "train/model_loading.h"
#include "train/model_memory_check.h"

namespace plab {

ModelOverview inspectModel(const ModelSpec& spec) {
  const ResolvedModelSource source = resolveModelSource(spec);
  ModelOverview o;
  o.config = source.config;
  o.sourceDescription = source.description;
  o.tokenizerKind = tokenizerForSource(source)->kind();
  // The layer tree comes from the real module classes (same names as the
  // trained model); weights are not read, a random init is enough.
  checkModelFitsInMemory(source.config, source.description);
  const auto model = createModel(source.config, 0);
  o.modules = describeModules(*model);
  o.parameterCount = source.config.parameterCount();
  return o;
}

}  // namespace plab
