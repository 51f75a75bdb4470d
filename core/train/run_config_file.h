#pragma once
// Reading a run config or sweep file (`run CONFIG.json`, the config.json of
// a run a resume continues, `advise CONFIG.json`, the app's Load config)
// through the reader of every file the tool reads back (util/json_file.h):
// a regular file of at most 16 MiB, UTF-8, nested at most 64 levels, no key
// given twice in one object, a number past a double's range named by its
// field. Torch-free.
#include <filesystem>
#include <vector>

#include "train/run_config.h"

namespace plab {

// loadRunConfigs of the file; ConfigError naming the file and the reason.
std::vector<RunConfig> loadRunConfigFile(const std::filesystem::path& file);

// The file's one run (RunConfig::fromJson); ConfigError otherwise.
RunConfig readRunConfigFile(const std::filesystem::path& file);

}  // namespace plab
