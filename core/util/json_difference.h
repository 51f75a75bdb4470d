#pragma once
// The first field in which two JSON documents differ, by its dotted path, so
// that a refusal can name it and both values ("'adamw.lr': rank 0 has 0.001,
// rank 1 has 0.1"). Objects are compared key by key (in sorted order),
// anything else as a whole value.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace plab {

struct JsonDifference {
  std::string path;  // "adamw.lr"; "" when the documents themselves differ in type
  bool inA = true, inB = true;  // false: the field is missing on that side
  nlohmann::json a, b;          // the two values (null where missing)
};

// nullopt when a == b. Recursion is bounded by the documents' nesting (the
// readers cap it at kMaxJsonDepth).
std::optional<JsonDifference> firstJsonDifference(const nlohmann::json& a, const nlohmann::json& b);

// The value as a message shows it: jsonExcerpt, or "nothing" where missing.
std::string differenceValueText(const JsonDifference& d, bool sideA);

}  // namespace plab
