#include "train/step_metrics.h"

#include <cmath>
#include <limits>

#include "util/errors.h"

namespace plab {
namespace {

using nlohmann::json;

// JSON has no NaN/Inf: they are written as null and read back as NaN, so a
// diverged step still round-trips as "not a number".
json numberOrNull(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

double readNumber(const json& j, const char* key) {
  if (!j.contains(key)) throw ConfigError(std::string("step metrics: missing '") + key + "'");
  const json& v = j.at(key);
  if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (!v.is_number()) throw ConfigError(std::string("step metrics: '") + key + "' must be a number");
  return v.get<double>();
}

json moduleNodeToJson(const ModuleNode& n) {
  json children = json::array();
  for (const ModuleNode& c : n.children) children.push_back(moduleNodeToJson(c));
  json j = {{"path", n.path},
            {"name", n.name},
            {"type", n.type},
            {"own_parameters", n.ownParameters},
            {"total_parameters", n.totalParameters},
            {"children", children}};
  if (!n.tiedTo.empty()) j["tied_to"] = n.tiedTo;
  return j;
}

json gemmStatsJson(const std::vector<GemmOperandStats>& stats) {
  json out = json::array();
  for (const GemmOperandStats& g : stats)
    out.push_back({{"layer", g.layer},
                   {"role", gemmRoleId(g.role)},
                   {"format", gemmFormatId(g.format)},
                   {"underflow", numberOrNull(g.underflow)},
                   {"saturation", numberOrNull(g.saturation)},
                   {"dynamic_range_log2", numberOrNull(g.dynamicRangeLog2)},
                   {"rel_error", numberOrNull(g.relError)},
                   {"scale_log2_min", numberOrNull(g.scaleLog2Min)},
                   {"scale_log2_max", numberOrNull(g.scaleLog2Max)}});
  return out;
}

// "gemm_layers" or "shadow_gemm": an array of operand statistics.
std::vector<GemmOperandStats> gemmStatsFromJson(const json& gemm, const std::string& key) {
  if (!gemm.is_array()) throw ConfigError("step metrics: '" + key + "' must be an array");
  std::vector<GemmOperandStats> out;
  for (const json& g : gemm) {
    auto text = [&](const char* field) {
      if (!g.is_object() || !g.contains(field) || !g.at(field).is_string())
        throw ConfigError("step metrics: each " + key + " entry needs a '" + field + "' string");
      return g.at(field).get<std::string>();
    };
    GemmOperandStats s;
    s.layer = text("layer");
    const std::string role = text("role");
    bool known = false;
    for (GemmRole r : {GemmRole::Input, GemmRole::Weight, GemmRole::GradOutput})
      if (gemmRoleId(r) == role) s.role = r, known = true;
    if (!known) throw ConfigError("step metrics: " + key + " role '" + role + "' is not input, weight or grad_output");
    s.format = gemmFormatFromId(text("format"));
    s.underflow = readNumber(g, "underflow");
    s.saturation = readNumber(g, "saturation");
    s.dynamicRangeLog2 = readNumber(g, "dynamic_range_log2");
    s.relError = readNumber(g, "rel_error");
    s.scaleLog2Min = readNumber(g, "scale_log2_min");
    s.scaleLog2Max = readNumber(g, "scale_log2_max");
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

nlohmann::json toJson(const StepMetrics& m) {
  json j = {{"step", m.step},
            {"loss", numberOrNull(m.loss)},
            {"grad_norm", numberOrNull(m.gradNorm)},
            {"lr", numberOrNull(m.lr)},
            {"tokens_per_second", numberOrNull(m.tokensPerSecond)},
            {"elapsed_seconds", numberOrNull(m.elapsedSeconds)},
            {"memory", toJson(m.memory)}};
  if (m.valLoss) j["val_loss"] = numberOrNull(*m.valLoss);
  // Statistics not measured at this step are left out (never repeated).
  if (m.roundedAwayFraction) j["rounded_away_fraction"] = numberOrNull(*m.roundedAwayFraction);
  if (m.updateRatio) j["update_ratio"] = numberOrNull(*m.updateRatio);
  if (m.updateLost) j["update_lost"] = numberOrNull(*m.updateLost);
  if (m.updateError) j["update_error"] = numberOrNull(*m.updateError);
  if (m.updateLostStdError) j["update_lost_se"] = numberOrNull(*m.updateLostStdError);
  if (m.updatePending) j["update_pending"] = numberOrNull(*m.updatePending);
  if (m.updateNoise) j["update_noise"] = numberOrNull(*m.updateNoise);
  if (m.momentErrorM) j["moment_error_m"] = numberOrNull(*m.momentErrorM);
  if (m.momentErrorV) j["moment_error_v"] = numberOrNull(*m.momentErrorV);
  json layers = json::array();
  for (const LayerStepMetrics& l : m.layers)
    layers.push_back({{"layer", l.layer},
                      {"rounded_away_fraction", numberOrNull(l.roundedAwayFraction)},
                      {"update_ratio", numberOrNull(l.updateRatio)}});
  j["layers"] = layers;
  if (!m.windowLayers.empty()) {
    json windows = json::array();
    for (const LayerWindowMetrics& w : m.windowLayers) {
      json entry = {{"layer", w.layer}, {"update_lost", numberOrNull(w.updateLost)}, {"update_error", numberOrNull(w.updateError)}};
      if (w.updateLostStdError) entry["update_lost_se"] = numberOrNull(*w.updateLostStdError);  // null: unknown (too few elements)
      if (w.updatePending) entry["update_pending"] = numberOrNull(*w.updatePending);
      if (w.elements) entry["elements"] = *w.elements;
      if (w.updateNoise) entry["update_noise"] = numberOrNull(*w.updateNoise);
      if (w.momentErrorM) entry["moment_error_m"] = numberOrNull(*w.momentErrorM);
      if (w.momentErrorV) entry["moment_error_v"] = numberOrNull(*w.momentErrorV);
      windows.push_back(std::move(entry));
    }
    j["window_layers"] = windows;
  }
  // The fp16 modes only: the other modes' lines stay as they were.
  if (m.lossScale) j["loss_scale"] = numberOrNull(*m.lossScale);
  if (m.stepSkipped) j["step_skipped"] = *m.stepSkipped;
  if (m.gradFp16ZeroShare) j["grad_fp16_zero_share"] = numberOrNull(*m.gradFp16ZeroShare);
  if (m.gradFp16FlushShare) j["grad_fp16_flush_share"] = numberOrNull(*m.gradFp16FlushShare);
  if (!m.fp16GradLayers.empty()) {
    json fp16 = json::array();
    for (const LayerFp16GradMetrics& l : m.fp16GradLayers) {
      json entry = {{"layer", l.layer}, {"grad_fp16_zero_share", numberOrNull(l.zeroShare)}};
      if (l.flushShare) entry["grad_fp16_flush_share"] = numberOrNull(*l.flushShare);
      fp16.push_back(std::move(entry));
    }
    j["fp16_grad_layers"] = fp16;
  }
  if (!m.gemmLayers.empty()) j["gemm_layers"] = gemmStatsJson(m.gemmLayers);
  if (!m.shadowGemm.empty()) j["shadow_gemm"] = gemmStatsJson(m.shadowGemm);
  if (!m.shadowRecipes.is_null()) j["shadow_recipes"] = m.shadowRecipes;
  if (m.shadowCpuSeconds) j["shadow_cpu_seconds"] = *m.shadowCpuSeconds;
  return j;
}

StepMetrics stepMetricsFromJson(const nlohmann::json& j) {
  if (!j.is_object()) throw ConfigError("step metrics: expected a JSON object");
  StepMetrics m;
  if (!j.contains("step") || !j.at("step").is_number_integer())
    throw ConfigError("step metrics: 'step' must be an integer");
  m.step = j.at("step").get<int64_t>();
  if (m.step < 1) throw ConfigError("step metrics: 'step' is " + std::to_string(m.step) + "; steps count from 1");
  m.loss = readNumber(j, "loss");
  m.gradNorm = readNumber(j, "grad_norm");
  m.lr = readNumber(j, "lr");
  m.tokensPerSecond = readNumber(j, "tokens_per_second");
  m.elapsedSeconds = readNumber(j, "elapsed_seconds");
  if (j.contains("val_loss")) m.valLoss = readNumber(j, "val_loss");
  if (j.contains("update_lost")) m.updateLost = readNumber(j, "update_lost");
  if (j.contains("update_error")) m.updateError = readNumber(j, "update_error");
  if (j.contains("update_lost_se")) m.updateLostStdError = readNumber(j, "update_lost_se");
  if (j.contains("update_pending")) m.updatePending = readNumber(j, "update_pending");
  if (j.contains("update_noise")) m.updateNoise = readNumber(j, "update_noise");
  if (j.contains("moment_error_m")) m.momentErrorM = readNumber(j, "moment_error_m");
  if (j.contains("moment_error_v")) m.momentErrorV = readNumber(j, "moment_error_v");
  if (j.contains("memory")) m.memory = memoryBreakdownFromJson(j.at("memory"));
  if (j.contains("layers")) {
    const json& layers = j.at("layers");
    if (!layers.is_array()) throw ConfigError("step metrics: 'layers' must be an array");
    for (const json& l : layers) {
      if (!l.is_object() || !l.contains("layer") || !l.at("layer").is_string())
        throw ConfigError("step metrics: each layer entry needs a 'layer' name");
      LayerStepMetrics lm;
      lm.layer = l.at("layer").get<std::string>();
      lm.roundedAwayFraction = readNumber(l, "rounded_away_fraction");
      lm.updateRatio = readNumber(l, "update_ratio");
      m.layers.push_back(std::move(lm));
    }
  }
  if (j.contains("window_layers")) {
    const json& windows = j.at("window_layers");
    if (!windows.is_array()) throw ConfigError("step metrics: 'window_layers' must be an array");
    for (const json& w : windows) {
      if (!w.is_object() || !w.contains("layer") || !w.at("layer").is_string())
        throw ConfigError("step metrics: each window_layers entry needs a 'layer' name");
      LayerWindowMetrics wm;
      wm.layer = w.at("layer").get<std::string>();
      wm.updateLost = readNumber(w, "update_lost");
      wm.updateError = readNumber(w, "update_error");
      if (w.contains("update_lost_se")) wm.updateLostStdError = readNumber(w, "update_lost_se");
      if (w.contains("update_pending")) wm.updatePending = readNumber(w, "update_pending");
      if (w.contains("elements") && w.at("elements").is_number_integer()) wm.elements = w.at("elements").get<int64_t>();
      if (w.contains("update_noise")) wm.updateNoise = readNumber(w, "update_noise");
      if (w.contains("moment_error_m")) wm.momentErrorM = readNumber(w, "moment_error_m");
      if (w.contains("moment_error_v")) wm.momentErrorV = readNumber(w, "moment_error_v");
      m.windowLayers.push_back(std::move(wm));
    }
  }
  if (j.contains("loss_scale")) m.lossScale = readNumber(j, "loss_scale");
  if (j.contains("step_skipped")) {
    if (!j.at("step_skipped").is_boolean()) throw ConfigError("step metrics: 'step_skipped' must be true or false");
    m.stepSkipped = j.at("step_skipped").get<bool>();
  }
  if (j.contains("grad_fp16_zero_share")) m.gradFp16ZeroShare = readNumber(j, "grad_fp16_zero_share");
  if (j.contains("grad_fp16_flush_share")) m.gradFp16FlushShare = readNumber(j, "grad_fp16_flush_share");
  if (j.contains("fp16_grad_layers")) {
    const json& layers = j.at("fp16_grad_layers");
    if (!layers.is_array()) throw ConfigError("step metrics: 'fp16_grad_layers' must be an array");
    for (const json& l : layers) {
      if (!l.is_object() || !l.contains("layer") || !l.at("layer").is_string())
        throw ConfigError("step metrics: each fp16_grad_layers entry needs a 'layer' name");
      LayerFp16GradMetrics fm;
      fm.layer = l.at("layer").get<std::string>();
      fm.zeroShare = readNumber(l, "grad_fp16_zero_share");
      if (l.contains("grad_fp16_flush_share")) fm.flushShare = readNumber(l, "grad_fp16_flush_share");
      m.fp16GradLayers.push_back(std::move(fm));
    }
  }
  if (j.contains("gemm_layers")) m.gemmLayers = gemmStatsFromJson(j.at("gemm_layers"), "gemm_layers");
  if (j.contains("shadow_gemm")) m.shadowGemm = gemmStatsFromJson(j.at("shadow_gemm"), "shadow_gemm");
  if (j.contains("shadow_recipes")) m.shadowRecipes = j.at("shadow_recipes");
  if (j.contains("shadow_cpu_seconds")) m.shadowCpuSeconds = readNumber(j, "shadow_cpu_seconds");
  // The step totals: absent on steps that did not measure them. Files
  // written before that repeated the last measured totals on those steps,
  // which are the ones without per-layer entries: such a repeat is dropped.
  const bool measuredHere = !m.layers.empty();
  if (j.contains("rounded_away_fraction") && measuredHere) m.roundedAwayFraction = readNumber(j, "rounded_away_fraction");
  if (j.contains("update_ratio") && measuredHere) m.updateRatio = readNumber(j, "update_ratio");
  return m;
}

namespace {
nlohmann::json rankMemoryJson(const std::vector<MemoryBreakdown>& ranks) {
  nlohmann::json out = nlohmann::json::array();
  for (const MemoryBreakdown& m : ranks) out.push_back(toJson(m));
  return out;
}
}  // namespace

nlohmann::json toJson(const RunInfo& i) {
  return {{"run_name", i.runName},
          {"started_at", i.startedAt},
          {"device", i.device},
          {"model_type", i.modelType},
          {"tokenizer", i.tokenizer},
          {"document_separator", i.documentSeparator},
          {"model_warnings", i.modelWarnings},
          {"modules", moduleNodeToJson(i.modules)},
          {"parameter_count", i.parameterCount},
          {"bf16_parameter_count", i.bf16ParameterCount},
          {"layers", i.layers},
          {"predicted_memory", toJson(i.predictedMemory)},
          {"measured_memory", toJson(i.measuredMemory)},
          {"rank_memory", rankMemoryJson(i.rankMemory)},
          {"optimizer_state_sharded", i.optimizerStateSharded},
          {"fp32_baseline", toJson(i.fp32Baseline)},
          {"optimizer_mode", i.optimizerMode},
          {"moment_precision", i.momentPrecision},
          {"weight_decay_rounded_away", i.weightDecayRoundedAway},
          {"weight_decay_effect", toJson(i.weightDecayEffect)},
          {"update_window", i.updateWindow},
          {"statistics_bytes", i.statisticsBytes},
          {"tokens_per_step", i.tokensPerStep},
          {"train_tokens", i.trainTokens},
          {"cuda_allocator_summary", i.cudaAllocatorSummary},
          {"blas", i.blas},
          {"libtorch_version", i.libtorchVersion},
          {"cuda_kernels_linked", i.cudaKernelsLinked},
          {"intra_op_threads", i.intraOpThreads},
          {"cpu_bf16_matmul", i.cpuBf16Gemm},
          {"cpu_capability", i.cpuCapability},
          {"mkl_cnr", i.mklCnr},
          {"cpu_model", i.cpuModel},
          {"libc", i.libc}};
}

nlohmann::json toJson(const RunResult& r) {
  json j = {{"status", runStatusId(r.status)},
            {"message", r.message},
            {"steps_done", r.stepsDone},
            {"final_loss", numberOrNull(r.finalLoss)},
            {"mean_tokens_per_second", numberOrNull(r.meanTokensPerSecond)},
            {"mean_rounded_away_fraction", numberOrNull(r.meanRoundedAwayFraction)},
            {"memory", toJson(r.memory)},
            {"memory_saved_fraction", numberOrNull(r.memorySavedFraction)}};
  j["final_val_loss"] = r.finalValLoss ? numberOrNull(*r.finalValLoss) : json(nullptr);
  j["mean_update_lost"] = r.meanUpdateLost ? numberOrNull(*r.meanUpdateLost) : json(nullptr);
  j["mean_update_error"] = r.meanUpdateError ? numberOrNull(*r.meanUpdateError) : json(nullptr);
  j["mean_update_lost_se"] = r.meanUpdateLostStdError ? numberOrNull(*r.meanUpdateLostStdError) : json(nullptr);
  j["mean_update_noise"] = r.meanUpdateNoise ? numberOrNull(*r.meanUpdateNoise) : json(nullptr);
  if (r.meanMomentErrorM) j["mean_moment_error_m"] = numberOrNull(*r.meanMomentErrorM);
  if (r.meanMomentErrorV) j["mean_moment_error_v"] = numberOrNull(*r.meanMomentErrorV);
  j["step_peak_bytes"] = r.stepPeakBytes ? json(*r.stepPeakBytes) : json(nullptr);
  j["training_peak_bytes"] = r.trainingPeakBytes ? json(*r.trainingPeakBytes) : json(nullptr);
  j["process_peak_bytes"] = r.processPeakBytes ? json(*r.processPeakBytes) : json(nullptr);
  j["peak_probe_steps"] = r.peakProbeSteps;
  j["world_size"] = r.worldSize;
  j["rank_memory"] = rankMemoryJson(r.rankMemory);
  if (r.skippedSteps) j["skipped_steps"] = *r.skippedSteps;  // fp16-mixed only
  if (r.finalLossScale) j["final_loss_scale"] = numberOrNull(*r.finalLossScale);
  return j;
}

std::string runStatusId(RunStatus s) {
  switch (s) {
    case RunStatus::Completed: return "completed";
    case RunStatus::Stopped: return "stopped";
    case RunStatus::Failed: return "failed";
  }
  return "unknown";
}

}  // namespace plab
