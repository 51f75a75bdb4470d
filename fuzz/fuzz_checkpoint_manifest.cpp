// A checkpoint's checksums.json as a resume reads it, before anything else:
// the input replaces the manifest of a small real checkpoint folder (a few
// files of known bytes), so inputs that pass the structure checks go on to
// the files' sizes and digests.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "fuzz_input_file.h"
#include "train/checkpoint_manifest.h"
#include "util/errors.h"

namespace {

struct Fixture {
  std::filesystem::path dir = plab::fuzz::scratchFolder() / "checkpoint-1";
  Fixture() {
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "trainer_state.json") << "{\"step\": 1}\n";
    std::ofstream(dir / "model.safetensors", std::ios::binary) << std::string(100, 'w');
    std::ofstream(dir / "optimizer.safetensors", std::ios::binary) << std::string(40, 'o');
    plab::writeCheckpointManifest(dir);
    // PLAB_FUZZ_WRITE_MANIFEST=FILE: the valid manifest, for the seed corpus.
    if (const char* out = std::getenv("PLAB_FUZZ_WRITE_MANIFEST"))
      std::filesystem::copy_file(dir / plab::kCheckpointManifestName, out,
                                 std::filesystem::copy_options::overwrite_existing);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture fixture;
  static const bool verbose = std::getenv("PLAB_FUZZ_VERBOSE") != nullptr;
  plab::fuzz::writeInput(data, size, std::string("checkpoint-1/") + plab::kCheckpointManifestName);
  try {
    plab::verifyCheckpointManifest(fixture.dir);
    if (verbose) std::printf("  accepted\n");
  } catch (const plab::Error& e) {
    if (verbose) std::printf("  refused: %s\n", e.what());
  }
  return 0;
}
