#pragma once
// Short names for a run's model and data, as tabs, group rows and legends
// show them: the folder a config.json or model lives in, the corpus file's
// name, never a bare "config.json". Torch-free and Qt-free.
#include <string>

namespace plab::report {

// source: "embedded", "hub", "local", "config"; path as in the run config.
std::string modelSourceLabel(const std::string& source, const std::string& path);
// An empty path is the embedded default corpus.
std::string dataSourceLabel(const std::string& path);

}  // namespace plab::report
