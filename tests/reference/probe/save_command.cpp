// save MODEL_DIR OUT_DIR [PLAN]: loads a folder (with PLAN applied, default
// fp32) and writes it with the checkpoint writer a run uses for its
// checkpoint-<step>/ folders (saveCheckpoint: config.json + model.safetensors).
#include "commands.h"
#include "model/model_factory.h"
#include "model_folder.h"

namespace plab::probe {

int saveCommand(const Args& args) {
  if (args.size() != 2 && args.size() != 3) throw UsageError("save MODEL_DIR OUT_DIR [PLAN]");
  const std::shared_ptr<CausalLM> model = loadModelFolder(args[0], args.size() == 3 ? args[2] : "fp32");
  saveCheckpoint(*model, args[1]);
  return 0;
}

}  // namespace plab::probe
