// Run configs as the CLI reads them: nesting check, parse, loadRunConfigs.
#include <cstddef>
#include <cstdint>
#include <string>

#include "train/run_config.h"
#include "util/errors.h"
#include "util/json_limits.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (!plab::jsonNestingProblem(text).empty()) return 0;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  try {
    plab::loadRunConfigs(j);
  } catch (const plab::Error&) {
  }
  return 0;
}
