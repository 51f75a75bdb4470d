#pragma once
// MODEL on the command line (`inspect`, `memory`): a JSON spec, "embedded",
// a folder, a config.json (a Hugging Face config or a run config) or org/name
// in the local cache.
#include <string>

#include "train/run_config.h"

namespace plab::cli {

ModelSpec modelSpecFromArgument(const std::string& arg);  // throws ConfigError

}  // namespace plab::cli
