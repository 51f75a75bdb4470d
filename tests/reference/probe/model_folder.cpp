#include "model_folder.h"

#include <map>

#include "precision/precision_adamw.h"
#include "tokenizer/tokenizer.h"
#include "train/model_loading.h"

namespace plab::probe {

std::shared_ptr<CausalLM> loadModelFolder(const std::filesystem::path& dir, const std::string& plan,
                                          std::vector<std::string>* warnings) {
  ModelSpec spec;
  spec.source = "folder";
  spec.path = dir.string();
  // The test folders carry weights only; a run needs a tokenizer, so they
  // take the byte tokenizer (their vocab_size is at least 257).
  spec.tokenizer = hasTokenizerFiles(dir) ? "auto" : "bytes";
  LoadedModel loaded = loadModelForRun(spec, /*seed=*/0);
  if (warnings) *warnings = loaded.warnings;
  if (plan != "fp32") {
    PrecisionPlan p;
    p.preset = planPresetFromId(plan);
    applyPrecisionPlan(*loaded.model, p, OptimizerMode::Bf16Plain);
  }
  return loaded.model;
}

std::string parameterDtypes(CausalLM& model) {
  std::map<std::string, int> counts;
  for (const auto& p : model.named_parameters()) counts[c10::toString(p.value().scalar_type())] += 1;
  std::string out;
  for (const auto& [dtype, n] : counts) out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + dtype;
  return out;
}

}  // namespace plab::probe
