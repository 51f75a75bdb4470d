#include "precision/memory_breakdown.h"

#include "precision/json_strict.h"

namespace plab {

nlohmann::json toJson(const MemoryBreakdown& m) {
  // "total" is derived; written for readers of the JSON, checked on reading.
  nlohmann::json j = {{"weights", m.weights}, {"gradients", m.gradients}, {"moments", m.moments},
                      {"master", m.master},   {"kahan", m.kahan},         {"total", m.total()}};
  // Written where there are some: the files of runs without quantized moments stay as they were.
  if (m.scales != 0) j["scales"] = m.scales;
  return j;
}

MemoryBreakdown memoryBreakdownFromJson(const nlohmann::json& j) {
  using namespace json_strict;
  const std::string what = "memory";
  requireObject(j, what);
  rejectUnknownKeys(j, what, {"weights", "gradients", "moments", "master", "kahan", "scales", "total"});
  MemoryBreakdown m;
  readInt(j, "weights", what, m.weights);
  readInt(j, "gradients", what, m.gradients);
  readInt(j, "moments", what, m.moments);
  readInt(j, "master", what, m.master);
  readInt(j, "kahan", what, m.kahan);
  if (j.contains("scales")) readInt(j, "scales", what, m.scales);  // absent: none (or a folder from before)
  for (int64_t v : {m.weights, m.gradients, m.moments, m.master, m.kahan, m.scales})
    if (v < 0) throw ConfigError(what + ": byte counts must be >= 0");
  if (j.contains("total")) {
    int64_t total = 0;
    readInt(j, "total", what, total);
    if (total != m.total())
      throw ConfigError(what + ".total: " + std::to_string(total) + " is not the sum of the parts (" +
                        std::to_string(m.total()) + ")");
  }
  return m;
}

MemoryBreakdown fp32AdamWBaseline(int64_t parameterCount) {
  MemoryBreakdown m;
  m.weights = 4 * parameterCount;
  m.gradients = 4 * parameterCount;
  m.moments = 8 * parameterCount;  // m and v, fp32 each
  return m;
}

}  // namespace plab
