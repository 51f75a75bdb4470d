// tokenizer.json through loadTokenizerJson.
#include "fuzz_input_file.h"
#include "tokenizer/tokenizer.h"
#include "util/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    plab::loadTokenizerJson(plab::fuzz::writeInput(data, size, "tokenizer.json"));
  } catch (const plab::Error&) {
  }
  return 0;
}
