#pragma once
// What a run's trajectory depends on, recorded in every checkpoint
// (trainer_state.json "trajectory") and compared when a run resumes from it:
// the whole effective run config but the fields that only name, place,
// measure or pace it, with the files it reads by content. The resumed run's
// config.json then describes every step of it, those in the checkpoint too.
// A resume whose
// data file holds another corpus, whose tokenizer files changed, or whose
// schedule, clipping, warmup, seed, lr, batch, precision plan ... differ
// would train another run under the old one's name; it is refused, naming
// the field.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "train/run_config.h"

namespace plab {

// The run config fields that may change on a resume: its name and folders,
// the cadence of evaluation, statistics and checkpoints, the shadow
// measurements, and where it runs (device, threads, reproducible: the same
// computation in another order). `steps` may change where it changes no
// learning rate of the steps both step counts have (trajectoryChange): a
// constant schedule whose warmup ends within both.
extern const char* const kResumableFields[];

// The settings: config.toJson() without kResumableFields, with data.path
// replaced by data.file, the data file's {"bytes", "sha256"} (the embedded
// corpus's when the path is empty), model reduced to model.tokenizer, and
// "tokenizer_files": every file the model's tokenizer reads by name ({} for
// the byte tokenizer). Digests of a file are computed once per size and
// modification time. Throws ConfigError naming a file that cannot be read.
nlohmann::json trajectorySettings(const RunConfig& config);

// "" when resuming `live` from a checkpoint at `step` whose recorded
// settings are `saved` follows the same trajectory; otherwise why not,
// naming the field and both values ("'adamw.lr' is 0.1 in this run, the
// checkpoint's run trained with 0.001"). `saved` is read as hostile input.
std::string trajectoryChange(const nlohmann::json& saved, const RunConfig& live, int64_t step);

}  // namespace plab
