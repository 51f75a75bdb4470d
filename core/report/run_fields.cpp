#include "report/run_fields.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "report/run_figures.h"
#include "report/source_labels.h"

namespace plab::report {
namespace {

using nlohmann::json;

std::string folded(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string numberText(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

FieldValue textValue(const std::string& text) { return {text, folded(text), std::nullopt}; }
FieldValue numberValue(double v) { return {numberText(v), numberText(v), v}; }

void flatten(const json& j, const std::string& path, std::unordered_map<std::string, FieldValue>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) flatten(it.value(), path.empty() ? it.key() : path + "." + it.key(), out);
    return;
  }
  if (j.is_array()) {
    std::string joined;
    for (const json& e : j) joined += (joined.empty() ? "" : ",") + (e.is_string() ? e.get<std::string>() : e.dump());
    out[path] = textValue(joined);
    return;
  }
  if (j.is_number()) out[path] = numberValue(j.get<double>());
  else if (j.is_boolean()) out[path] = textValue(j.get<bool>() ? "true" : "false");
  else if (j.is_string()) out[path] = textValue(j.get<std::string>());
  else out[path] = textValue("");
}

const std::pair<const char*, const char*> kAliases[] = {
    {"lr", "adamw.lr"},        {"wd", "adamw.weight_decay"}, {"beta1", "adamw.beta1"},
    {"beta2", "adamw.beta2"},  {"eps", "adamw.eps"},         {"moments", "adamw.moments"},
    {"kernels", "adamw.kernels"}, {"model", "model.path"},   {"tokenizer", "model.tokenizer"},
    {"data", "data.path"},     {"preset", "plan.preset"},    {"format", "plan.gemm_format"},
    {"gemm", "plan.gemm_format"}, {"batch", "batch_size"},   {"seq", "seq_len"},
    {"schedule", "lr_schedule"}, {"warmup", "warmup_steps"}, {"clip", "grad_clip"},
    {"accum", "grad_accum"}};

}  // namespace

const FieldValue* RunFields::find(const std::string& field) const {
  const auto it = values.find(canonicalField(field));
  return it == values.end() ? nullptr : &it->second;
}

std::string canonicalField(const std::string& name) {
  const std::string f = folded(name);
  for (const auto& [alias, path] : kAliases)
    if (f == alias) return path;
  return f;
}

std::vector<std::pair<std::string, std::string>> fieldAliases() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [alias, path] : kAliases) out.emplace_back(alias, path);
  for (const char* figure : {"status", "name", "folder", "plan", "loss", "val_loss", "update_lost", "rounded_away",
                             "tokens_per_s", "steps_done"})
    out.emplace_back(figure, "");
  return out;
}

RunFields runFields(const RunRecord& run, const std::string& status, const std::string& folderName) {
  RunFields f;
  json config = run.config.toJson();
  config.erase("output_dir");
  config.erase("resume_from");
  flatten(config, "", f.values);
  // Written only when not bf16 (precision_plan.cpp): a run without one multiplies in bf16.
  if (!f.values.count("plan.gemm_format")) f.values["plan.gemm_format"] = textValue("bf16");
  f.values["plan"] = textValue(config.at("plan").dump());
  f.values["status"] = textValue(status);
  f.values["name"] = textValue(run.config.name);
  f.values["folder"] = textValue(folderName);
  const RunResult r = shownResult(run);
  const bool measured = r.stepsDone > 0 || !run.steps.empty();
  f.values["steps_done"] = numberValue(static_cast<double>(r.stepsDone));
  if (measured && std::isfinite(r.finalLoss)) f.values["loss"] = numberValue(r.finalLoss);
  if (r.finalValLoss && std::isfinite(*r.finalValLoss)) f.values["val_loss"] = numberValue(*r.finalValLoss);
  if (r.meanUpdateLost && std::isfinite(*r.meanUpdateLost)) f.values["update_lost"] = numberValue(*r.meanUpdateLost);
  if (measured) f.values["rounded_away"] = numberValue(r.meanRoundedAwayFraction);
  if (r.meanTokensPerSecond > 0) f.values["tokens_per_s"] = numberValue(r.meanTokensPerSecond);
  f.words = folded(run.config.name + "\n" + optimizerModeId(run.config.mode) + "\n" + status + "\n" + folderName);
  return f;
}

std::string fieldValueLabel(const std::string& field, const FieldValue* value) {
  const std::string path = canonicalField(field);
  if (!value) return field + " –";
  if (path == "plan") {
    const json plan = json::parse(value->text, nullptr, false);
    if (plan.is_object()) {
      std::string label = plan.value("preset", "?");
      size_t changes = 0;
      for (const char* part : {"overrides", "gemm_formats", "recipes", "moments"})
        if (plan.contains(part) && plan.at(part).is_object()) changes += plan.at(part).size();
      if (plan.value("gemm_format", "bf16") != "bf16") label += ", " + plan.value("gemm_format", "") + " GEMMs";
      if (changes > 0) label += " + " + std::to_string(changes) + " layer choices";
      return "plan " + label;
    }
  }
  // The fields a group row is usually made of read by their value alone.
  if (path == "mode") return value->text;
  if (path == "model.path") return modelSourceLabel("", value->text);
  if (path == "data.path") return dataSourceLabel(value->text);
  if (path == "plan.gemm_format") return value->text + " GEMMs";
  return field + "=" + value->text;
}

}  // namespace plab::report
