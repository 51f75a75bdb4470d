// train RUN.json DUMP_DIR: one training run of the project's Trainer, its
// config the default run's (defaultRunConfig) with RUN.json's keys merged
// over it (JSON merge patch), with each fp16-mixed step's gradients (scaled, as autograd
// handed them over, and after the loss scaler unscaled them) written to
// DUMP_DIR/step-N.safetensors, for torch.amp.GradScaler to replay. The run
// folder is the config's output_dir.
#include <cstdlib>
#include <iostream>

#include "commands.h"
#include "json_files.h"
#include "train/trainer.h"

namespace plab::probe {

int trainCommand(const Args& args) {
  if (args.size() != 2) throw UsageError("train RUN.json DUMP_DIR");
  nlohmann::json merged = defaultRunConfig().toJson();
  merged.merge_patch(readJson(args[0]));
  const RunConfig config = RunConfig::fromJson(merged);
  setenv("PLAB_TEST_DUMP_SCALED_GRADS", args[1].c_str(), 1);
  Trainer trainer(config);
  const RunResult result = trainer.run({});
  if (result.status != RunStatus::Completed) {
    std::cerr << "run " << config.name << " " << runStatusId(result.status) << ": " << result.message << '\n';
    return 1;
  }
  return 0;
}

}  // namespace plab::probe
