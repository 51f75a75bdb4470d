#pragma once
// Strict JSON field readers shared by the precision area's config parsers:
// unknown keys and wrong types raise ConfigError naming the field. Torch-free.
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "util/errors.h"

namespace plab::json_strict {

inline void requireObject(const nlohmann::json& j, const std::string& what) {
  if (!j.is_object()) throw ConfigError(what + ": expected a JSON object, got " + j.type_name());
}

// Throws if j has a key outside `known`.
inline void rejectUnknownKeys(const nlohmann::json& j, const std::string& what,
                              std::initializer_list<const char*> known) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool ok = false;
    for (const char* k : known) ok = ok || it.key() == k;
    if (!ok) throw ConfigError(what + ": unknown key '" + it.key() + "'");
  }
}

inline void readNumber(const nlohmann::json& j, const char* key, const std::string& what, double& out) {
  if (!j.contains(key)) return;
  const auto& v = j.at(key);
  if (!v.is_number()) throw ConfigError(what + "." + key + ": expected a number, got " + v.type_name());
  out = v.get<double>();
}

inline void readBool(const nlohmann::json& j, const char* key, const std::string& what, bool& out) {
  if (!j.contains(key)) return;
  const auto& v = j.at(key);
  if (!v.is_boolean()) throw ConfigError(what + "." + key + ": expected true/false, got " + v.type_name());
  out = v.get<bool>();
}

inline void readInt(const nlohmann::json& j, const char* key, const std::string& what, int64_t& out) {
  if (!j.contains(key)) return;
  const auto& v = j.at(key);
  if (!v.is_number_integer()) throw ConfigError(what + "." + key + ": expected an integer, got " + v.type_name());
  // 2^63 and above parse as unsigned: read as int64 they would wrap to negative.
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
    throw ConfigError(what + "." + key + ": " + v.dump() + " is out of range: beyond the largest 64-bit integer");
  out = v.get<int64_t>();
}

inline void readString(const nlohmann::json& j, const char* key, const std::string& what, std::string& out) {
  if (!j.contains(key)) return;
  const auto& v = j.at(key);
  if (!v.is_string()) throw ConfigError(what + "." + key + ": expected a string, got " + v.type_name());
  out = v.get<std::string>();
}

}  // namespace plab::json_strict
