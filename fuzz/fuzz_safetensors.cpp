// A safetensors file: header validation and every tensor loaded.
#include "fuzz_input_file.h"
#include "model/safetensors.h"
#include "util/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const plab::SafetensorsFile file(plab::fuzz::writeInput(data, size, "model.safetensors"));
    for (const std::string& name : file.names()) file.load(name);
  } catch (const plab::Error&) {
  }
  return 0;
}
