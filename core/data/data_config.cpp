#include "data/data_config.h"

#include "util/errors.h"
#include "util/json_limits.h"

namespace plab {

nlohmann::json toJson(const DataConfig& c) {
  return {{"path", c.path}, {"text_field", c.text_field}, {"val_fraction", c.val_fraction}, {"seed", c.seed}};
}

DataConfig dataConfigFromJson(const nlohmann::json& j) {
  if (!j.is_object()) throw ConfigError("data config: expected a JSON object, got " + std::string(j.type_name()));
  DataConfig c;
  for (const auto& item : j.items()) {
    const std::string& key = item.key();
    const nlohmann::json& value = item.value();
    const auto wrongType = [&](const char* expected) {
      return ConfigError("data config: field '" + key + "' must be " + expected + ", got " + jsonExcerpt(value));
    };
    if (key == "path") {
      if (!value.is_string()) throw wrongType("a string");
      c.path = value.get<std::string>();
    } else if (key == "text_field") {
      if (!value.is_string() || value.get<std::string>().empty()) throw wrongType("a non-empty string");
      c.text_field = value.get<std::string>();
    } else if (key == "val_fraction") {
      if (!value.is_number()) throw wrongType("a number");
      c.val_fraction = value.get<double>();
      if (!(c.val_fraction >= 0.0 && c.val_fraction < 1.0)) throw wrongType("in [0, 1)");
    } else if (key == "seed") {
      if (!value.is_number_unsigned() && !(value.is_number_integer() && value.get<int64_t>() >= 0))
        throw wrongType("a non-negative integer");
      c.seed = value.get<uint64_t>();
    } else {
      throw ConfigError("data config: unknown field '" + key + "'");
    }
  }
  return c;
}

}  // namespace plab
