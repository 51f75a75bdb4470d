// Run configs as the CLI reads them: through the file reader (size cap,
// UTF-8, nesting, duplicate keys, the field of an overflowing number), then
// loadRunConfigs.
#include <cstddef>
#include <cstdint>

#include "fuzz_input_file.h"
#include "train/run_config_file.h"
#include "util/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    plab::loadRunConfigFile(plab::fuzz::writeInput(data, size, "run.json"));
  } catch (const plab::Error&) {
  }
  return 0;
}
