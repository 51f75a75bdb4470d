#pragma once
// What a training step measures besides its loss and the optimizer's own
// statistics, in one place: the quantized GEMM operands (runs with
// low-precision GEMMs; metrics "gemm_layers"), and the advisor's shadows —
// the candidate GEMM formats on the bf16 products ("shadow_gemm") and the
// bf16 writes of the fp32 layers' updates ("shadow_recipes"). None of them
// changes the training. The trainer calls them in the step's order.
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "precision/precision_adamw.h"
#include "train/run_config.h"
#include "train/step_metrics.h"

namespace plab {

class GemmStatsCollector;
class ShadowGemm;
class ShadowRecipes;

class StepProbes {
 public:
  // After the precision plan is applied and the optimizer has adopted the
  // parameters (the shadow writes read the fp32 weights it steps).
  StepProbes(torch::nn::Module& model, const RunConfig& config, const std::vector<TrainableParam>& params);
  ~StepProbes();

  // Before the step's forward passes; statisticsStep: one that measures the
  // optimizer's per-layer figures (the GEMM operands go with them).
  void beforeForward(int64_t step, bool statisticsStep);
  // After the backward passes: what the forward and backward recorded.
  void afterBackward(StepMetrics& m);
  // Around an optimizer step that updates the weights (not a skipped one).
  // afterOptimizerStep also sets m.shadowCpuSeconds in runs with a shadow.
  void beforeOptimizerStep();
  void afterOptimizerStep(StepMetrics& m);

 private:
  int64_t shadowGemmEvery_ = 40;
  double shadowCpu_ = 0;  // this step's CPU time in the shadows (StepMetrics::shadowCpuSeconds)
  std::unique_ptr<GemmStatsCollector> gemmStats_;  // runs with GEMM formats other than bf16 only
  std::unique_ptr<ShadowGemm> shadowGemm_;         // runs with shadow_gemm_formats only
  std::unique_ptr<ShadowRecipes> shadowRecipes_;   // runs with shadow_recipes only
};

}  // namespace plab
