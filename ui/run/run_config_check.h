#pragma once
// Checks a run config with the CLI's own rules: RunConfig::fromJson on the
// config's JSON, then checkRunConfigForModel (the plan against the model). One source of truth, so the app refuses exactly what
// `precision-lab-cli run` refuses, with the same message.
#include <QString>

#include "train/run_config.h"

namespace plab::ui {

// Empty when the CLI would accept config; otherwise the CLI's message.
QString runConfigProblem(const plab::RunConfig& config);

}  // namespace plab::ui
