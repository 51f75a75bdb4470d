#pragma once
// The default states experiment (issue 40, point 5): the default fine-tune
// with the optimizer's moments in each store, paired against fp32 AdamW:
// fp32, bf16-sr with its own bf16-sr moments and with torchao's 8bit, 4bit
// and fp8 stores, and bf16-kahan with 8bit moments. Runs are named after
// mode and store ("tiny-gpt2-finetune-bf16-sr-8bit-moments").
#include <nlohmann/json.hpp>

namespace plab {

// {"runs": [...]} for loadRunConfigs.
nlohmann::json defaultStatesExperimentJson();

}  // namespace plab
