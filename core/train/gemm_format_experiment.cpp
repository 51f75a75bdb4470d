#include "train/gemm_format_experiment.h"

#include "train/run_config.h"

namespace plab {

std::vector<RunConfig> formatsExperimentRuns(const RunConfig& base, const std::string& headModule) {
  std::vector<RunConfig> runs;
  for (GemmFormat f : {GemmFormat::Bf16, GemmFormat::Fp8E4m3, GemmFormat::Mxfp8, GemmFormat::Mxfp4, GemmFormat::Nvfp4}) {
    RunConfig c = base;
    c.name = base.name + "-" + gemmFormatId(f);
    c.plan.gemm_format = f;
    c.plan.gemm_formats.clear();
    runs.push_back(c);
  }
  if (!headModule.empty()) {
    RunConfig head = base;
    head.name = base.name + "-nvfp4-bf16-head";
    head.plan.gemm_format = GemmFormat::Nvfp4;
    head.plan.gemm_formats = {{headModule, GemmFormat::Bf16}};  // the output head: the last layer
    runs.push_back(head);
  }
  return runs;
}

nlohmann::json defaultFormatsExperimentJson() {
  nlohmann::json runs = nlohmann::json::array();
  for (const RunConfig& c : formatsExperimentRuns(defaultRunConfig(), "lm_head")) {
    nlohmann::json j = c.toJson();
    j.erase("output_dir");
    runs.push_back(j);
  }
  return {{"runs", runs}};
}

}  // namespace plab
