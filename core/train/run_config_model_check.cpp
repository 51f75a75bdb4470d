#include "train/run_config_model_check.h"

#include <optional>

#include "model/module_tree_from_config.h"
#include "train/model_loading.h"
#include "util/errors.h"

namespace plab {

void checkRunConfigForModel(const RunConfig& config) {
  std::optional<ModelConfig> model;
  try {
    model = resolveModelSource(config.model).config;
  } catch (const std::exception&) {
    return;  // the run's setup resolves it again and says why it cannot
  }
  const std::string run = "run '" + config.name + "': ";
  const ModuleNode tree = describeModulesFromConfig(*model);
  try {
    (void)config.plan.resolve(tree);
    (void)config.plan.resolveGemmFormats(tree);
    if (!config.plan.recipes.empty()) (void)config.plan.resolveRecipes(tree, config.mode);
    if (!config.plan.moments.empty()) (void)config.plan.resolveMoments(tree, config.mode);
  } catch (const ConfigError& e) {
    throw ConfigError(run + "run config: 'plan': " + e.what());
  }
  const int64_t positions = model->max_position_embeddings;
  if (positions > 0 && config.seq_len > positions)
    throw ConfigError(run + "run config: 'seq_len' " + std::to_string(config.seq_len) +
                      " exceeds the model's max positions (" + std::to_string(positions) + ")");
}

}  // namespace plab
