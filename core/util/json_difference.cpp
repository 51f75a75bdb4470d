#include "util/json_difference.h"

#include <set>

#include "util/json_limits.h"

namespace plab {
namespace {

std::optional<JsonDifference> differenceAt(const nlohmann::json& a, const nlohmann::json& b, const std::string& path) {
  if (a == b) return std::nullopt;
  if (!a.is_object() || !b.is_object()) return JsonDifference{path, true, true, a, b};
  std::set<std::string> keys;
  for (const auto& item : a.items()) keys.insert(item.key());
  for (const auto& item : b.items()) keys.insert(item.key());
  for (const std::string& key : keys) {
    const std::string field = path.empty() ? textExcerpt(key, 80) : path + "." + textExcerpt(key, 80);
    const bool inA = a.contains(key), inB = b.contains(key);
    if (!inA || !inB)
      return JsonDifference{field, inA, inB, inA ? a.at(key) : nlohmann::json(), inB ? b.at(key) : nlohmann::json()};
    if (auto d = differenceAt(a.at(key), b.at(key), field)) return d;
  }
  return std::nullopt;
}

}  // namespace

std::optional<JsonDifference> firstJsonDifference(const nlohmann::json& a, const nlohmann::json& b) {
  return differenceAt(a, b, "");
}

std::string differenceValueText(const JsonDifference& d, bool sideA) {
  if (sideA ? !d.inA : !d.inB) return "nothing";
  return jsonExcerpt(sideA ? d.a : d.b, 80);
}

}  // namespace plab
