// Resuming from a checkpoint folder whose trainer_state.json is the input
// (checksums.json recomputed for it);
// its weights and optimizer state are a real checkpoint of a tiny GPT-2
// (bf16-kahan, linear layers in bf16) written once per process, so inputs
// that pass the state checks go on to the tensor checks and the load.
//
// PLAB_FUZZ_VERBOSE=1 prints each input's outcome; PLAB_FUZZ_WRITE_STATE=FILE
// copies the valid trainer_state.json of that checkpoint to FILE (the seed
// corpus's valid-*.json come from it).
#include <torch/torch.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "fuzz_input_file.h"
#include "model/model_factory.h"
#include "precision/precision_adamw.h"
#include "train/checkpoint.h"
#include "train/checkpoint_manifest.h"
#include "util/errors.h"

namespace {

struct Fixture {
  plab::RunConfig config;
  std::shared_ptr<plab::CausalLM> model;
  std::unique_ptr<plab::PrecisionAdamW> optimizer;
  std::filesystem::path dir;

  Fixture() {
    at::set_num_threads(1);
    config.steps = 10;
    config.mode = plab::OptimizerMode::Bf16Kahan;
    model = plab::createModel(plab::ModelConfig::fromJson({{"model_type", "gpt2"},
                                                           {"vocab_size", 61},
                                                           {"n_embd", 32},
                                                           {"n_layer", 2},
                                                           {"n_head", 4},
                                                           {"n_positions", 32}}),
                              1);
    optimizer = std::make_unique<plab::PrecisionAdamW>(plab::applyPrecisionPlan(*model, config.plan, config.mode),
                                                       config.mode, config.adamw, config.seed);
    // Where writeInput puts the inputs: checkpoint-1/trainer_state.json is replaced per input.
    dir = plab::fuzz::scratchFolder() / "checkpoint-1";
    std::mt19937_64 sampler(7);
    // Step 1 with the counts an optimizer that has not stepped reports: the
    // valid seeds set them to 1.
    plab::writeCheckpoint(dir, *model, *optimizer, config, 1, sampler);
    if (const char* out = std::getenv("PLAB_FUZZ_WRITE_STATE"))
      std::filesystem::copy_file(dir / "trainer_state.json", out, std::filesystem::copy_options::overwrite_existing);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture fixture;
  static const bool verbose = std::getenv("PLAB_FUZZ_VERBOSE") != nullptr;
  plab::fuzz::writeInput(data, size, "checkpoint-1/trainer_state.json");
  // Sealed again, so that the input reaches the trainer state's reader (an
  // unsealed one stops at the checksums: fuzz_checkpoint_manifest covers them).
  plab::writeCheckpointManifest(fixture.dir);
  std::mt19937_64 sampler;
  try {
    const int64_t step = plab::resumeFromCheckpoint(fixture.dir, fixture.config, *fixture.model, *fixture.optimizer, sampler);
    if (verbose) std::printf("  resumed at step %lld\n", static_cast<long long>(step));
  } catch (const plab::Error& e) {
    if (verbose) std::printf("  refused: %s\n", e.what());
  }
  return 0;
}
