#pragma once
// The default formats experiment (issue 22, point 4): the default fine-tune
// (bf16 weights, bf16-kahan) with every Linear/Conv1D and the tied head in one
// GEMM format per run: bf16, fp8-e4m3, mxfp8, mxfp4, nvfp4, plus nvfp4 with
// the 4-bit recipes' remedy of a higher-precision last layer (the tied
// lm_head kept in bf16). Runs are named after their format
// ("tiny-gpt2-finetune-mxfp8", "tiny-gpt2-finetune-nvfp4-bf16-head").
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "train/run_config.h"

namespace plab {

// The experiment's runs on any base run: its mode and plan's precisions kept,
// one run per format with every product in it (gemm_formats cleared), named
// base.name + "-" + format; when headModule names the model's output head
// ("lm_head"), also nvfp4 with that head's product in bf16 ("-nvfp4-bf16-head").
std::vector<RunConfig> formatsExperimentRuns(const RunConfig& base, const std::string& headModule);

// {"runs": [...]} for loadRunConfigs.
nlohmann::json defaultFormatsExperimentJson();

}  // namespace plab
