#include "train/run_config_file.h"

#include "util/errors.h"
#include "util/json_file.h"

namespace plab {
namespace {

nlohmann::json readConfigDocument(const std::filesystem::path& file) {
  JsonFile read = readJsonFile(file, kMaxJsonFileBytes, /*refuseDuplicateKeys=*/true);
  if (!read.ok()) throw ConfigError(file.string() + " " + read.problem);
  return std::move(read.value);
}

}  // namespace

std::vector<RunConfig> loadRunConfigFile(const std::filesystem::path& file) {
  const nlohmann::json j = readConfigDocument(file);
  try {
    return loadRunConfigs(j);
  } catch (const ConfigError& e) {
    throw ConfigError(file.string() + ": " + e.what());
  }
}

RunConfig readRunConfigFile(const std::filesystem::path& file) {
  const nlohmann::json j = readConfigDocument(file);
  try {
    return RunConfig::fromJson(j);
  } catch (const ConfigError& e) {
    throw ConfigError(file.string() + ": " + e.what());
  }
}

}  // namespace plab
