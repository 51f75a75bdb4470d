#pragma once
// Core structs that travel through queued signals between the training
// thread and the UI thread.
#include <QMetaType>

#include "hub/hf_cache.h"
#include "train/model_inspect.h"
#include "train/run_config.h"
#include "train/step_metrics.h"

Q_DECLARE_METATYPE(plab::RunConfig)
Q_DECLARE_METATYPE(plab::RunInfo)
Q_DECLARE_METATYPE(plab::StepMetrics)
Q_DECLARE_METATYPE(plab::RunResult)
Q_DECLARE_METATYPE(plab::ModelOverview)

namespace plab::ui {

// Idempotent; call before the first queued connection carrying these types.
void registerMetaTypes();

}  // namespace plab::ui
