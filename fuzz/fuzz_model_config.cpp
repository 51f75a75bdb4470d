// config.json through ModelConfig::fromFile.
#include "fuzz_input_file.h"
#include "model/model_config.h"
#include "util/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    plab::ModelConfig::fromFile(plab::fuzz::writeInput(data, size, "config.json"));
  } catch (const plab::Error&) {
  }
  return 0;
}
