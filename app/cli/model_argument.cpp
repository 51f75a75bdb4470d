#include "model_argument.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "model/model_config.h"
#include "util/errors.h"
#include "util/json_limits.h"

namespace plab::cli {
namespace fs = std::filesystem;

ModelSpec modelSpecFromArgument(const std::string& arg) {
  if (arg == "embedded") return ModelSpec{};
  if (arg == "embedded-init") {
    ModelSpec spec;
    spec.source = "embedded-init";
    return spec;
  }
  if (!arg.empty() && arg.front() == '{') {
    if (const std::string nesting = jsonNestingProblem(arg); !nesting.empty())
      throw ConfigError("the model spec: " + nesting);
    const auto j = nlohmann::json::parse(arg, nullptr, false);
    if (j.is_discarded()) throw ConfigError("the model spec is not valid JSON: " + textExcerpt(arg));
    return modelSpecFromJson(j);
  }
  const fs::path path(arg);
  ModelSpec spec;
  if (fs::is_directory(path)) {
    const bool hasWeights =
        fs::exists(path / "model.safetensors") || fs::exists(path / "model.safetensors.index.json");
    spec.source = hasWeights ? "folder" : "config";
    spec.path = path.string();
    return spec;
  }
  // Anything else that is there (a FIFO, a device, a dangling link) goes to the
  // reader too, which says what it is instead of "model not found".
  std::error_code ec;
  if (fs::is_regular_file(path) || fs::exists(fs::symlink_status(path, ec))) {
    // The reader of every config.json: regular files only (a FIFO never blocks), the nesting cap, a clear error.
    const nlohmann::json j = readConfigJsonFile(path);
    if (!j.is_object()) throw ConfigError(path.string() + " is not a JSON object");
    if (j.contains("source")) return modelSpecFromJson(j);
    if (j.contains("model") && j.at("model").is_object()) return modelSpecFromJson(j.at("model"));
    spec.source = "config";
    spec.path = path.string();
    return spec;
  }
  if (arg.find('/') != std::string::npos && !fs::exists(path) && arg.front() != '/' && arg.front() != '.') {
    spec.source = "hub";
    spec.path = arg;
    return spec;
  }
  throw ConfigError("model not found: " + textExcerpt(arg, 200) + " (expected a folder, a config.json, a JSON spec or org/name)");
}

}  // namespace plab::cli
