// advice.json: the advisor's result (advisor/advisor.h), written and read back.
#include <cmath>
#include <optional>

#include "advisor/advisor.h"
#include "util/errors.h"

namespace plab {
namespace {

using json = nlohmann::json;

// A non-finite number is written as null (JSON has no NaN).
json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
double numberOf(const json& j) { return j.is_number() ? j.get<double>() : std::nan(""); }

json optionalNumber(const std::optional<double>& v) { return v ? number(*v) : json(nullptr); }

json momentErrorToJson(const std::optional<double>& m, const std::optional<double>& v) {
  return {{"m", optionalNumber(m)}, {"v", optionalNumber(v)}};
}

// {"m": x, "v": y} (either null), or null.
void momentErrorFromJson(const json& j, std::optional<double>& m, std::optional<double>& v) {
  if (!j.is_object()) return;
  if (j.contains("m") && j.at("m").is_number()) m = j.at("m").get<double>();
  if (j.contains("v") && j.at("v").is_number()) v = j.at("v").get<double>();
}

json verdictToJson(const MomentStoreVerdict& v) {
  return {{"store", momentPrecisionId(v.store)},
          {"in_plan", v.inPlan},
          {"confirmed", v.confirmed},
          {"state_bytes", v.stateBytes},
          {"bytes_saved", v.bytesSaved},
          {"memory_saved", number(v.memorySaved)},
          {"loss_vs_fp32", optionalNumber(v.lossVsFp32)},
          {"loss_vs_fp32_ci", v.lossVsFp32 ? json::array({number(v.ciLow), number(v.ciHigh)}) : json(nullptr)},
          {"moment_error", momentErrorToJson(v.momentErrorM, v.momentErrorV)},
          {"reason", v.reason},
          {"layers", v.layers}};  // the layers it was put on; empty: every layer (run-wide)
}

MomentStoreVerdict verdictFromJson(const json& j) {
  MomentStoreVerdict v;
  v.store = momentPrecisionFromId(j.at("store").get<std::string>());
  if (!momentsQuantized(v.store))
    throw ConfigError("advice: moment_stores store '" + momentPrecisionId(v.store) + "' is not a quantized store");
  v.inPlan = j.at("in_plan").get<bool>();
  v.confirmed = j.value("confirmed", false);
  v.stateBytes = j.value("state_bytes", int64_t{0});
  v.bytesSaved = j.value("bytes_saved", int64_t{0});
  v.memorySaved = numberOf(j.value("memory_saved", json(nullptr)));
  if (j.contains("loss_vs_fp32") && j.at("loss_vs_fp32").is_number()) {
    v.lossVsFp32 = j.at("loss_vs_fp32").get<double>();
    const json& ci = j.at("loss_vs_fp32_ci");
    v.ciLow = numberOf(ci.at(0));
    v.ciHigh = numberOf(ci.at(1));
  }
  momentErrorFromJson(j.value("moment_error", json(nullptr)), v.momentErrorM, v.momentErrorV);
  v.reason = j.value("reason", "");
  if (j.contains("layers")) {
    if (!j.at("layers").is_array()) throw ConfigError("advice: moment_stores 'layers' must be an array of module paths");
    for (const json& l : j.at("layers")) {
      if (!l.is_string()) throw ConfigError("advice: moment_stores 'layers' must be an array of module paths");
      v.layers.push_back(l.get<std::string>());
    }
  }
  return v;
}

json candidateToJson(const AdvisorCandidate& c) {
  json valLoss = json::array();
  for (double v : c.valLoss) valLoss.push_back(number(v));
  json j = {{"name", c.name},
            {"description", c.description},
            {"mode", optimizerModeId(c.config.mode)},
            {"plan", toJson(c.config.plan)},
            {"config", c.config.toJson()},
            {"fp32_layers", c.fp32Layers},
            {"state_bytes", c.stateBytes},
            {"memory_saved", number(c.memorySaved)},
            {"loss_vs_fp32", c.lossVsFp32 ? number(*c.lossVsFp32) : json(nullptr)},
            {"loss_vs_fp32_ci", c.lossVsFp32 ? json::array({number(c.ciLow), number(c.ciHigh)}) : json(nullptr)},
            {"val_loss", valLoss},
            {"rejected", c.rejected}};
  j["measured_update_lost"] = c.measuredUpdateLost ? number(*c.measuredUpdateLost) : json(nullptr);
  j["measured_update_lost_se"] = c.measuredUpdateLostSe ? number(*c.measuredUpdateLostSe) : json(nullptr);
  json tps = json::array();
  for (double v : c.tokensPerSecond) tps.push_back(number(v));
  j["tokens_per_second"] = tps;
  j["predicted_update_lost"] = c.predictedUpdateLost ? number(*c.predictedUpdateLost) : json(nullptr);
  j["training_peak_bytes"] = c.trainingPeakBytes ? json(*c.trainingPeakBytes) : json(nullptr);
  j["measured_state_bytes"] = c.measuredStateBytes ? json(*c.measuredStateBytes) : json(nullptr);
  json recipes = json::object();
  for (const auto& [layer, m] : c.layerRecipes) recipes[layer] = optimizerModeId(m);
  j["layer_recipes"] = recipes;
  j["layers_at_risk"] = c.layersAtRisk;
  j["compensated_elements"] = c.compensatedElements;
  j["moments"] = momentPrecisionId(c.config.adamw.moments);
  j["moment_error"] = c.momentErrorM || c.momentErrorV ? momentErrorToJson(c.momentErrorM, c.momentErrorV) : json(nullptr);
  json layerError = json::object();
  for (const auto& [layer, e] : c.layerMomentError) layerError[layer] = number(e);
  j["layer_moment_error"] = layerError;
  return j;
}

AdvisorCandidate candidateFromJson(const json& j) {
  AdvisorCandidate c;
  c.name = j.at("name").get<std::string>();
  c.description = j.value("description", "");
  c.config = RunConfig::fromJson(j.at("config"));
  c.fp32Layers = j.value("fp32_layers", std::vector<std::string>{});
  c.layerRecipes = c.config.plan.recipes;  // "layer_recipes" repeats the plan's, for readers
  c.layersAtRisk = j.value("layers_at_risk", 0);
  c.compensatedElements = j.value("compensated_elements", int64_t{0});
  c.stateBytes = j.at("state_bytes").get<int64_t>();
  c.memorySaved = numberOf(j.at("memory_saved"));
  if (j.contains("loss_vs_fp32") && !j.at("loss_vs_fp32").is_null()) {
    c.lossVsFp32 = numberOf(j.at("loss_vs_fp32"));
    const json& ci = j.at("loss_vs_fp32_ci");
    c.ciLow = numberOf(ci.at(0));
    c.ciHigh = numberOf(ci.at(1));
  }
  for (const json& v : j.value("val_loss", json::array())) c.valLoss.push_back(numberOf(v));
  c.rejected = j.value("rejected", "");
  if (j.contains("measured_update_lost") && j.at("measured_update_lost").is_number())
    c.measuredUpdateLost = j.at("measured_update_lost").get<double>();
  if (j.contains("measured_update_lost_se") && j.at("measured_update_lost_se").is_number())
    c.measuredUpdateLostSe = j.at("measured_update_lost_se").get<double>();
  for (const json& v : j.value("tokens_per_second", json::array())) c.tokensPerSecond.push_back(numberOf(v));
  if (j.contains("predicted_update_lost") && j.at("predicted_update_lost").is_number())
    c.predictedUpdateLost = j.at("predicted_update_lost").get<double>();
  if (j.contains("training_peak_bytes") && j.at("training_peak_bytes").is_number_integer())
    c.trainingPeakBytes = j.at("training_peak_bytes").get<int64_t>();
  if (j.contains("measured_state_bytes") && j.at("measured_state_bytes").is_number_integer())
    c.measuredStateBytes = j.at("measured_state_bytes").get<int64_t>();
  momentErrorFromJson(j.value("moment_error", json(nullptr)), c.momentErrorM, c.momentErrorV);
  if (j.contains("layer_moment_error") && j.at("layer_moment_error").is_object())
    for (const auto& [layer, e] : j.at("layer_moment_error").items()) c.layerMomentError[layer] = numberOf(e);
  return c;
}

json figures(double nearest, double stochastic, double kahan) {
  return {{"nearest", number(nearest)}, {"stochastic", number(stochastic)}, {"kahan", number(kahan)}};
}

}  // namespace

json adviceToJson(const Advice& a) {
  json candidates = json::array();
  for (const AdvisorCandidate& c : a.candidates) candidates.push_back(candidateToJson(c));
  json layers = json::array();
  for (const LayerShadowFigures& l : a.layers)
    layers.push_back({{"layer", l.layer},
                      {"elements", l.elements},
                      {"update_lost", figures(l.lostNearest, l.lostStochastic, l.lostKahan)},
                      {"update_lost_se", figures(l.lostNearestSe, l.lostStochasticSe, l.lostKahanSe)},
                      {"below_half_ulp", number(l.belowHalfUlp)}});
  json fp32ValLoss = json::array();
  for (double v : a.fp32ValLoss) fp32ValLoss.push_back(number(v));
  const bool hasChoice = a.chosen >= 0 && a.chosen < static_cast<int>(a.candidates.size());
  json gemmCandidates = json::array();
  for (const AdvisorCandidate& c : a.gemmCandidates) gemmCandidates.push_back(candidateToJson(c));
  json gemmLayers = json::array();
  for (const LayerGemmShadow& g : a.gemmLayers)
    gemmLayers.push_back({{"layer", g.layer},
                          {"format", gemmFormatId(g.format)},
                          {"role", gemmRoleId(g.role)},
                          {"underflow", number(g.underflow)},
                          {"saturation", number(g.saturation)},
                          {"rel_error", number(g.relError)},
                          {"steps", g.steps}});
  json momentStores = json::array();
  for (const MomentStoreVerdict& v : a.momentStores) momentStores.push_back(verdictToJson(v));
  const bool hasGemmChoice = a.gemmChosen >= 0 && a.gemmChosen < static_cast<int>(a.gemmCandidates.size());
  return {{"completed", a.completed},
          {"message", a.message},
          {"steps", a.steps},
          {"seeds", a.seeds},
          {"seconds", number(a.seconds)},
          {"tolerance", number(a.tolerance)},
          {"tolerance_source", a.toleranceSource},
          {"fp32", {{"val_loss", fp32ValLoss}, {"spread", number(a.fp32Spread)}, {"state_bytes", a.fp32StateBytes}}},
          {"chosen", hasChoice ? candidates.at(static_cast<size_t>(a.chosen)) : json(nullptr)},
          {"chosen_index", hasChoice ? a.chosen : -1},
          {"candidates", candidates},
          {"layers", layers},
          {"shadow_overhead", a.shadowOverhead ? number(*a.shadowOverhead) : json(nullptr)},
          {"gemm_layers", gemmLayers},
          {"gemm_candidates", gemmCandidates},
          {"gemm_chosen", hasGemmChoice ? gemmCandidates.at(static_cast<size_t>(a.gemmChosen)) : json(nullptr)},
          {"gemm_chosen_index", hasGemmChoice ? a.gemmChosen : -1},
          {"moment_stores", momentStores}};
}

Advice adviceFromJson(const json& j) {
  try {
    Advice a;
    a.completed = j.at("completed").get<bool>();
    a.message = j.value("message", "");
    a.steps = j.at("steps").get<int64_t>();
    a.seeds = j.at("seeds").get<std::vector<uint64_t>>();
    a.seconds = numberOf(j.at("seconds"));
    a.tolerance = numberOf(j.at("tolerance"));
    a.toleranceSource = j.value("tolerance_source", "");
    const json& fp32 = j.at("fp32");
    for (const json& v : fp32.at("val_loss")) a.fp32ValLoss.push_back(numberOf(v));
    a.fp32Spread = numberOf(fp32.at("spread"));
    a.fp32StateBytes = fp32.at("state_bytes").get<int64_t>();
    for (const json& c : j.at("candidates")) a.candidates.push_back(candidateFromJson(c));
    a.chosen = j.at("chosen_index").get<int>();
    if (a.chosen >= static_cast<int>(a.candidates.size())) throw ConfigError("advice: 'chosen_index' out of range");
    for (const json& l : j.at("layers")) {
      LayerShadowFigures f;
      f.layer = l.at("layer").get<std::string>();
      f.elements = l.at("elements").get<int64_t>();
      const json& lost = l.at("update_lost");
      const json& se = l.at("update_lost_se");
      f.lostNearest = numberOf(lost.at("nearest"));
      f.lostStochastic = numberOf(lost.at("stochastic"));
      f.lostKahan = numberOf(lost.at("kahan"));
      f.lostNearestSe = numberOf(se.at("nearest"));
      f.lostStochasticSe = numberOf(se.at("stochastic"));
      f.lostKahanSe = numberOf(se.at("kahan"));
      f.belowHalfUlp = numberOf(l.at("below_half_ulp"));
      a.layers.push_back(std::move(f));
    }
    if (j.contains("shadow_overhead") && j.at("shadow_overhead").is_number())
      a.shadowOverhead = j.at("shadow_overhead").get<double>();
    // The GEMM formats' part (absent in advice written before it).
    for (const json& c : j.value("gemm_candidates", json::array())) a.gemmCandidates.push_back(candidateFromJson(c));
    a.gemmChosen = j.value("gemm_chosen_index", -1);
    if (a.gemmChosen >= static_cast<int>(a.gemmCandidates.size()))
      throw ConfigError("advice: 'gemm_chosen_index' out of range");
    for (const json& g : j.value("gemm_layers", json::array())) {
      LayerGemmShadow l;
      l.layer = g.at("layer").get<std::string>();
      l.format = gemmFormatFromId(g.at("format").get<std::string>());
      const std::string role = g.at("role").get<std::string>();
      if (role != gemmRoleId(GemmRole::Input) && role != gemmRoleId(GemmRole::Weight))
        throw ConfigError("advice: gemm_layers role '" + role + "' is not input or weight");
      l.role = role == gemmRoleId(GemmRole::Input) ? GemmRole::Input : GemmRole::Weight;
      l.underflow = numberOf(g.at("underflow"));
      l.saturation = numberOf(g.at("saturation"));
      l.relError = numberOf(g.at("rel_error"));
      l.steps = g.at("steps").get<int>();
      a.gemmLayers.push_back(std::move(l));
    }
    // The moment stores' verdicts (absent in advice written before them).
    for (const json& v : j.value("moment_stores", json::array())) a.momentStores.push_back(verdictFromJson(v));
    return a;
  } catch (const json::exception& e) {
    throw ConfigError(std::string("advice: malformed JSON (") + e.what() + ")");
  }
}

}  // namespace plab
