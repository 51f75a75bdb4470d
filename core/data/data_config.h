#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace plab {

struct DataConfig {
  std::string path;                 // .txt / .jsonl file; empty = embedded default corpus
  std::string text_field = "text";  // JSONL field
  double val_fraction = 0.1;
  uint64_t seed = 0;
};

nlohmann::json toJson(const DataConfig& c);
DataConfig dataConfigFromJson(const nlohmann::json& j);  // throws ConfigError

}  // namespace plab
