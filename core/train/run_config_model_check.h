#pragma once
// The checks of a run config that need its model's module tree (from the
// model's config.json alone, nothing allocated): the precision plan's
// overrides, recipes and GEMM formats name modules the model has, and
// seq_len fits its positions. `run`, `advise` and the app make them when the
// config is read, not when training starts (a plan whose recipes named no
// module passed `advise` and failed `run` only after its setup). Torch-free.
#include "train/run_config.h"

namespace plab {

// Throws ConfigError naming the run and the field. A model that cannot be
// resolved yet (a hub model not in the cache: the run downloads it first;
// a missing folder) is left to the run's own setup, which reports it.
void checkRunConfigForModel(const RunConfig& config);

}  // namespace plab
