#pragma once
// Reading and writing the probe's JSON files (torch-free).
#include <filesystem>

#include <nlohmann/json.hpp>

namespace plab::probe {

nlohmann::json readJson(const std::filesystem::path& path);  // throws std::runtime_error naming the file
void writeJson(const std::filesystem::path& path, const nlohmann::json& value);

}  // namespace plab::probe
