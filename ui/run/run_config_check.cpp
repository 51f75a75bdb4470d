#include "run/run_config_check.h"

#include <exception>

#include "train/run_config_model_check.h"
#include "train/torch_runtime.h"

namespace plab::ui {

QString runConfigProblem(const plab::RunConfig& config) {
  try {
    (void)plab::RunConfig::fromJson(config.toJson());
    plab::checkRunConfigForModel(config);  // the plan against the model's modules, as run and advise check it
  } catch (const std::exception& e) {  // ConfigError, or anything else: a refusal, never a crash
    return QString::fromUtf8(e.what());
  }
  // Up front, not after Start.
  return QString::fromStdString(plab::deviceProblem(config.device));
}

}  // namespace plab::ui
