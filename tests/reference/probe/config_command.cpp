// config MODEL_DIR OUT.json: whether the project accepts the folder's
// config.json as a run does (parsed, the model built from it): {"ok": bool,
// "error": message or null, "warnings": [...]} (what it accepts with a
// warning, as transformers warns).
#include "commands.h"
#include "json_files.h"
#include "model/model_factory.h"

namespace plab::probe {

int configCommand(const Args& args) {
  if (args.size() != 2) throw UsageError("config MODEL_DIR OUT.json");
  nlohmann::json out = {{"ok", false}, {"error", nullptr}, {"warnings", nlohmann::json::array()}};
  try {
    const ModelConfig config = ModelConfig::fromFile(std::filesystem::path(args[0]) / "config.json");
    createModel(config, /*seed=*/0);
    out["ok"] = true;
    out["warnings"] = config.warnings;
  } catch (const std::exception& e) {
    out["error"] = e.what();
  }
  writeJson(args[1], out);
  return 0;
}

}  // namespace plab::probe
