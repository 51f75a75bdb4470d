#include "train/gemm_format_experiment.h"

#include "train/run_config.h"

namespace plab {

nlohmann::json defaultFormatsExperimentJson() {
  const RunConfig base = defaultRunConfig();
  nlohmann::json runs = nlohmann::json::array();
  for (GemmFormat f : {GemmFormat::Bf16, GemmFormat::Fp8E4m3, GemmFormat::Mxfp8, GemmFormat::Mxfp4, GemmFormat::Nvfp4}) {
    RunConfig c = base;
    c.name = base.name + "-" + gemmFormatId(f);
    c.plan.gemm_format = f;
    runs.push_back(c.toJson());
  }
  RunConfig head = base;
  head.name = base.name + "-nvfp4-bf16-head";
  head.plan.gemm_format = GemmFormat::Nvfp4;
  head.plan.setGemmSubtree("lm_head", GemmFormat::Bf16);  // the tied output head: the last layer
  runs.push_back(head.toJson());
  for (auto& r : runs) r.erase("output_dir");
  return {{"runs", runs}};
}

}  // namespace plab
