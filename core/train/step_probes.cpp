#include "train/step_probes.h"

#include "advisor/shadow_recipes.h"
#include "formats/gemm_stats.h"
#include "model/quantized_linear.h"
#include "model/shadow_gemm.h"
#include "util/cpu_time.h"

namespace plab {

StepProbes::StepProbes(torch::nn::Module& model, const RunConfig& config, const std::vector<TrainableParam>& params) {
  const int64_t window = config.update_window > 0 ? config.update_window : 20;
  if (config.plan.usesLowPrecisionGemms() && config.mode != OptimizerMode::Fp32AdamW) {
    gemmStats_ = std::make_unique<GemmStatsCollector>();
    attachGemmStats(model, gemmStats_.get());
  }
  if (!config.shadow_gemm_formats.empty()) {
    shadowGemm_ = std::make_unique<ShadowGemm>(config.shadow_gemm_formats);
    attachShadowGemm(model, shadowGemm_.get());
  }
  // The shadow formats on step 1 and every second window only: four
  // quantizations of every input and weight cost 2-3 plain steps (the
  // advisor's shadow run stays within 30 % of a plain run).
  shadowGemmEvery_ = 2 * window;
  if (config.shadow_recipes) shadowRecipes_ = std::make_unique<ShadowRecipes>(params, window, config.seed);
}

StepProbes::~StepProbes() = default;

void StepProbes::beforeForward(int64_t step, bool statisticsStep) {
  shadowCpu_ = 0;
  if (gemmStats_ && statisticsStep) gemmStats_->arm();
  if (shadowGemm_ && (step == 1 || step % shadowGemmEvery_ == 0)) shadowGemm_->arm();
}

void StepProbes::afterBackward(StepMetrics& m) {
  if (gemmStats_ && gemmStats_->armed()) m.gemmLayers = gemmStats_->disarm();
  if (shadowGemm_ && shadowGemm_->armed()) m.shadowGemm = shadowGemm_->disarm();
  if (shadowGemm_) shadowCpu_ += shadowGemm_->takeCpuSeconds();
}

void StepProbes::beforeOptimizerStep() {
  if (!shadowRecipes_) return;
  const double start = processCpuSeconds();
  shadowRecipes_->beforeStep();
  shadowCpu_ += processCpuSeconds() - start;
}

void StepProbes::afterOptimizerStep(StepMetrics& m) {
  if (shadowRecipes_) {
    const double start = processCpuSeconds();
    m.shadowRecipes = shadowRecipes_->afterStep();
    shadowCpu_ += processCpuSeconds() - start;
  }
  if (shadowRecipes_ || shadowGemm_) m.shadowCpuSeconds = shadowCpu_;
}

}  // namespace plab
