#include "train/states_experiment.h"

#include "precision/optimizer_mode.h"
#include "train/run_config.h"

namespace plab {

nlohmann::json defaultStatesExperimentJson() {
  nlohmann::json base = defaultRunConfig().toJson();
  base.erase("output_dir");
  const std::string name = base.at("name").get<std::string>();
  nlohmann::json runs = nlohmann::json::array();
  const auto add = [&](OptimizerMode mode, MomentPrecision moments) {
    nlohmann::json run = base;
    run["mode"] = optimizerModeId(mode);
    run["adamw"]["moments"] = momentPrecisionId(moments);
    run["name"] = name + "-" + optimizerModeId(mode) +
                  (mode == OptimizerMode::Fp32AdamW ? "" : "-" + momentPrecisionId(moments) + "-moments");
    runs.push_back(std::move(run));
  };
  add(OptimizerMode::Fp32AdamW, MomentPrecision::ModeDefault);  // the twin every other run is paired with
  for (MomentPrecision m : {MomentPrecision::Bf16Stochastic, MomentPrecision::Dynamic8bit,
                            MomentPrecision::Dynamic4bit, MomentPrecision::Fp8})
    add(OptimizerMode::Bf16StochasticRounding, m);
  add(OptimizerMode::Bf16Kahan, MomentPrecision::Dynamic8bit);
  return {{"runs", runs}};
}

}  // namespace plab
