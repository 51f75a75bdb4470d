#pragma once
// A Hugging Face model folder loaded the way a run loads it, with a
// precision plan applied the way the trainer applies it.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "model/causal_lm.h"

namespace plab::probe {

// PLAN: "fp32" (weights as loaded, fp32) or a preset id ("all-fp32",
// "linear-bf16", "all-bf16") applied by applyPrecisionPlan as the bf16 mode
// applies it (bf16 modules hold bf16 parameters).
// Warnings of the loading (LoadedModel::warnings) go to *warnings.
std::shared_ptr<CausalLM> loadModelFolder(const std::filesystem::path& dir, const std::string& plan,
                                          std::vector<std::string>* warnings = nullptr);

// Parameters by dtype, for the caller's log ("12 bf16, 3 fp32").
std::string parameterDtypes(CausalLM& model);

}  // namespace plab::probe
