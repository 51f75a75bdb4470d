// logits MODEL_DIR IDS.json PLAN OUT.safetensors: the project's forward pass
// on a batch of ids ([[...], ...], equal lengths); writes "logits" [B, T, V]
// as fp32, and in the file's metadata "warnings" (a JSON list): what loading
// the folder warned about.
#include "commands.h"
#include "json_files.h"
#include "model/safetensors.h"
#include "model_folder.h"

namespace plab::probe {

int logitsCommand(const Args& args) {
  if (args.size() != 4) throw UsageError("logits MODEL_DIR IDS.json PLAN OUT.safetensors");
  std::vector<std::string> warnings;
  const std::shared_ptr<CausalLM> model = loadModelFolder(args[0], args[2], &warnings);
  const nlohmann::json rows = readJson(args[1]);
  if (!rows.is_array() || rows.empty() || !rows[0].is_array() || rows[0].empty())
    throw std::runtime_error(args[1] + ": expected [[id, ...], ...]");
  const auto B = static_cast<int64_t>(rows.size()), T = static_cast<int64_t>(rows[0].size());
  torch::Tensor ids = torch::empty({B, T}, torch::kInt64);
  for (int64_t b = 0; b < B; ++b) {
    if (!rows[b].is_array() || static_cast<int64_t>(rows[b].size()) != T)
      throw std::runtime_error(args[1] + ": rows of different lengths");
    for (int64_t t = 0; t < T; ++t) ids[b][t] = rows[b][t].get<int64_t>();
  }
  torch::NoGradGuard noGrad;
  model->eval();
  const torch::Tensor logits = model->forward(ids).to(torch::kFloat32).contiguous();
  writeSafetensors(args[3], {{"logits", logits}},
                   {{"parameters", parameterDtypes(*model)}, {"warnings", nlohmann::json(warnings).dump()}});
  return 0;
}

}  // namespace plab::probe
