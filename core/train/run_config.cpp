#include "train/run_config.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <sstream>

#include "hub/hub_names.h"
#include "util/errors.h"
#include "util/json_limits.h"

namespace plab {
namespace {

using nlohmann::json;

// Strict readers: a wrong type names the key and the expected type, so a
// typo in a hand-written config.json is reported instead of ignored.
void requireObject(const json& j, const std::string& what) {
  if (!j.is_object())
    throw ConfigError("run config: " + what + " must be a JSON object, got " + j.type_name());
}

void readString(const json& j, const char* key, const std::string& prefix, std::string& out) {
  if (!j.contains(key)) return;
  const json& v = j.at(key);
  if (!v.is_string())
    throw ConfigError("run config: '" + prefix + key + "' must be a string, got " + v.type_name());
  out = v.get<std::string>();
}

void readInt(const json& j, const char* key, int64_t& out, const std::string& prefix = "") {
  if (!j.contains(key)) return;
  const json& v = j.at(key);
  if (!v.is_number_integer())
    throw ConfigError("run config: '" + prefix + key + "' must be an integer, got " + v.type_name());
  // 2^63 and above parse as unsigned: read as int64 they would wrap to negative.
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
    throw ConfigError("run config: '" + prefix + key + "' is " + jsonExcerpt(v) +
                      ", out of range: beyond the largest 64-bit integer");
  out = v.get<int64_t>();
}

void readUInt(const json& j, const char* key, uint64_t& out) {
  if (!j.contains(key)) return;
  const json& v = j.at(key);
  if (!v.is_number_integer() || (v.is_number_integer() && !v.is_number_unsigned() && v.get<int64_t>() < 0))
    throw ConfigError(std::string("run config: '") + key +
                      "' must be a non-negative integer, got " + jsonExcerpt(v));
  out = v.get<uint64_t>();
}

void readBool(const json& j, const char* key, bool& out) {
  if (!j.contains(key)) return;
  const json& v = j.at(key);
  if (!v.is_boolean())
    throw ConfigError(std::string("run config: '") + key + "' must be true or false, got " + v.type_name());
  out = v.get<bool>();
}

void readDouble(const json& j, const char* key, double& out) {
  if (!j.contains(key)) return;
  const json& v = j.at(key);
  if (!v.is_number())
    throw ConfigError(std::string("run config: '") + key + "' must be a number, got " + v.type_name());
  out = v.get<double>();
}

// Prefixes a nested parser's ConfigError with where it came from.
template <typename F>
auto nested(const char* key, F&& parse) -> decltype(parse()) {
  try {
    return parse();
  } catch (const ConfigError& e) {
    throw ConfigError(std::string("run config: '") + key + "': " + e.what());
  }
}

const char* const kKnownKeys[] = {
    "name",       "model",         "data",          "plan",          "mode",
    "adamw",      "steps",         "batch_size",    "grad_accum",    "seq_len",
    "lr_schedule", "warmup_steps", "min_lr_ratio",  "grad_clip",     "eval_every",
    "eval_batches", "layer_stats_every", "update_window", "checkpoint_every", "resume_from", "seed",
    "device",     "threads",       "reproducible",  "output_dir",    "loss_scale",
    "shadow_recipes", "shadow_gemm_formats"};

void validate(const RunConfig& c) {
  auto require = [](bool ok, const std::string& msg) {
    if (!ok) throw ConfigError("run config: " + msg);
  };
  require(!c.name.empty(), "'name' must not be empty");
  require(c.steps > 0, "'steps' must be > 0 (got " + std::to_string(c.steps) + ")");
  require(c.batch_size > 0, "'batch_size' must be > 0 (got " + std::to_string(c.batch_size) + ")");
  require(c.grad_accum > 0, "'grad_accum' must be > 0 (got " + std::to_string(c.grad_accum) + ")");
  require(c.seq_len > 0, "'seq_len' must be > 0 (got " + std::to_string(c.seq_len) + ")");
  require(std::isfinite(c.adamw.lr) && c.adamw.lr > 0, "'adamw.lr' must be > 0");
  require(c.lr_schedule == "constant" || c.lr_schedule == "cosine",
          "'lr_schedule' must be \"constant\" or \"cosine\" (got \"" + c.lr_schedule + "\")");
  require(c.warmup_steps >= 0, "'warmup_steps' must be >= 0");
  require(std::isfinite(c.min_lr_ratio) && c.min_lr_ratio >= 0 && c.min_lr_ratio <= 1,
          "'min_lr_ratio' must be in [0, 1]");
  require(std::isfinite(c.grad_clip), "'grad_clip' must be finite");
  require(c.eval_every >= 0, "'eval_every' must be >= 0");
  require(c.eval_batches > 0, "'eval_batches' must be > 0");
  require(c.layer_stats_every > 0, "'layer_stats_every' must be > 0");
  require(c.update_window >= 0, "'update_window' must be >= 0 (0 turns the update-lost window off)");
  require(c.plan.recipes.empty() || !modeUsesFp16(c.mode),
          "'plan.recipes' gives bf16 layers their own recipe; mode " + optimizerModeId(c.mode) +
              " holds fp16 layers (use a bf16 mode, or drop the recipes)");
  require(c.plan.moments.empty() || !modeUsesFp16(c.mode),
          "'plan.moments' gives layers their own moment store; mode " + optimizerModeId(c.mode) +
              " holds fp16 layers (use a bf16 mode, or drop the moments)");
  require(c.checkpoint_every >= 0, "'checkpoint_every' must be >= 0");
  // Tokens per step = batch_size x grad_accum x seq_len must stay a count
  // (2^40: far past any memory), not overflow int64.
  constexpr int64_t kMaxTokensPerStep = int64_t(1) << 40;
  require(c.batch_size <= kMaxTokensPerStep / c.grad_accum / c.seq_len,
          "'batch_size' x 'grad_accum' x 'seq_len' is out of range: at most 2^40 tokens per step (got " +
              std::to_string(c.batch_size) + " x " + std::to_string(c.grad_accum) + " x " +
              std::to_string(c.seq_len) + ")");
  // The GEMM formats quantize bf16 or fp32 operands; fp16 modes hold fp16
  // weights (the run failed at step 1: "quantizeDequantize ... got Half").
  require(!modeUsesFp16(c.mode) || !c.plan.usesLowPrecisionGemms(),
          "'plan.gemm_format' / 'plan.gemm_formats' simulate GEMM formats from bf16 or fp32 operands; mode " +
              optimizerModeId(c.mode) + " holds fp16 weights (use a bf16 mode or fp32, or drop the formats)");
  require(!modeUsesFp16(c.mode) || c.shadow_gemm_formats.empty(),
          "'shadow_gemm_formats' measures the products that run in bf16; mode " + optimizerModeId(c.mode) +
              " runs them in fp16 (use a bf16 mode, or drop it)");
  require(std::isfinite(c.loss_scale_init) && c.loss_scale_init > 0 &&
              static_cast<double>(static_cast<float>(c.loss_scale_init)) == c.loss_scale_init,
          "'loss_scale.init_scale' must be a finite positive fp32 value");
  require(c.loss_scale_growth_interval >= 1 && c.loss_scale_growth_interval <= 2147483647,
          "'loss_scale.growth_interval' must be a positive 32-bit count of steps");
  const bool deviceOk = c.device == "auto" || c.device == "cpu" || c.device == "cuda" ||
                        (c.device.rfind("cuda:", 0) == 0 && c.device.size() > 5 &&
                         c.device.find_first_not_of("0123456789", 5) == std::string::npos);
  require(deviceOk, "'device' must be auto, cpu, cuda or cuda:N (got \"" + c.device + "\")");
  require(c.threads >= 0 && c.threads <= 1024,
          "'threads' must be in [0, 1024] (0: one per CPU; got " + std::to_string(c.threads) + ")");
  require(!c.reproducible || c.device == "cpu",
          "'reproducible' runs on the CPU: it needs \"device\": \"cpu\" (got \"" + c.device + "\")");
  require(!c.reproducible || c.threads <= 1,
          "'reproducible' runs on one thread: it needs 'threads' 0 or 1 (got " + std::to_string(c.threads) + ")");
}

}  // namespace

ModelSpec modelSpecFromJson(const json& j) {
  requireObject(j, "'model'");
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "source" && it.key() != "path" && it.key() != "revision" && it.key() != "tokenizer")
      throw ConfigError("run config: unknown key 'model." + it.key() + "'");
  ModelSpec s;
  readString(j, "source", "model.", s.source);
  readString(j, "path", "model.", s.path);
  readString(j, "revision", "model.", s.revision);
  readString(j, "tokenizer", "model.", s.tokenizer);
  if (s.tokenizer != "auto" && s.tokenizer != "bytes")
    throw ConfigError("run config: 'model.tokenizer' must be auto or bytes (got '" + s.tokenizer + "')");
  const bool embedded = s.source == "embedded" || s.source == "embedded-init";
  if (!embedded && s.source != "config" && s.source != "folder" && s.source != "hub")
    throw ConfigError("run config: 'model.source' must be one of embedded, embedded-init, config, folder, hub (got '" +
                      s.source + "')");
  if (!embedded && s.path.empty())
    throw ConfigError("run config: 'model.path' is required for model source '" + s.source + "'");
  // Hub names become cache paths: refuse what could point outside the cache.
  if (s.source == "hub") {
    try {
      validateRepoId(s.path);
      if (!s.revision.empty()) validateRevision(s.revision);
    } catch (const ConfigError& e) {
      throw ConfigError(std::string("run config: 'model': ") + e.what());
    }
  }
  return s;
}

json toJson(const ModelSpec& s) {
  return {{"source", s.source}, {"path", s.path}, {"revision", s.revision}, {"tokenizer", s.tokenizer}};
}

RunConfig RunConfig::fromJson(const nlohmann::json& j) {
  requireObject(j, "the run");
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool known = false;
    for (const char* k : kKnownKeys) known = known || it.key() == k;
    if (!known) throw ConfigError("run config: unknown key '" + it.key() + "'");
  }
  RunConfig c;
  readString(j, "name", "", c.name);
  if (j.contains("model")) c.model = modelSpecFromJson(j.at("model"));
  if (j.contains("data")) c.data = nested("data", [&] { return dataConfigFromJson(j.at("data")); });
  if (j.contains("plan")) c.plan = nested("plan", [&] { return precisionPlanFromJson(j.at("plan")); });
  if (j.contains("mode")) {
    std::string id;
    readString(j, "mode", "", id);
    c.mode = nested("mode", [&] { return optimizerModeFromId(id); });
  }
  if (j.contains("adamw")) c.adamw = nested("adamw", [&] { return adamWOptionsFromJson(j.at("adamw")); });
  readInt(j, "steps", c.steps);
  readInt(j, "batch_size", c.batch_size);
  readInt(j, "grad_accum", c.grad_accum);
  readInt(j, "seq_len", c.seq_len);
  readString(j, "lr_schedule", "", c.lr_schedule);
  readInt(j, "warmup_steps", c.warmup_steps);
  readDouble(j, "min_lr_ratio", c.min_lr_ratio);
  readDouble(j, "grad_clip", c.grad_clip);
  readInt(j, "eval_every", c.eval_every);
  readInt(j, "eval_batches", c.eval_batches);
  readInt(j, "layer_stats_every", c.layer_stats_every);
  readInt(j, "update_window", c.update_window);
  readInt(j, "checkpoint_every", c.checkpoint_every);
  readString(j, "resume_from", "", c.resume_from);
  readUInt(j, "seed", c.seed);
  readString(j, "device", "", c.device);
  readInt(j, "threads", c.threads);
  readBool(j, "reproducible", c.reproducible);
  readString(j, "output_dir", "", c.output_dir);
  readBool(j, "shadow_recipes", c.shadow_recipes);
  if (j.contains("shadow_gemm_formats")) {
    const json& formats = j.at("shadow_gemm_formats");
    if (!formats.is_array() || formats.size() > 16)
      throw ConfigError("run config: 'shadow_gemm_formats' must be an array of at most 16 GEMM format ids");
    for (const json& f : formats) {
      if (!f.is_string()) throw ConfigError("run config: 'shadow_gemm_formats' entries must be GEMM format ids");
      c.shadow_gemm_formats.push_back(gemmFormatFromId(f.get<std::string>()));
    }
  }
  if (j.contains("loss_scale")) {
    const json& ls = j.at("loss_scale");
    requireObject(ls, "'loss_scale'");
    for (auto it = ls.begin(); it != ls.end(); ++it)
      if (it.key() != "init_scale" && it.key() != "growth_interval")
        throw ConfigError("run config: unknown key 'loss_scale." + it.key() + "'");
    readDouble(ls, "init_scale", c.loss_scale_init);
    readInt(ls, "growth_interval", c.loss_scale_growth_interval, "loss_scale.");
  }
  validate(c);
  return c;
}

nlohmann::json RunConfig::toJson() const {
  json j = {{"name", name},
             {"model", plab::toJson(model)},
             {"data", plab::toJson(data)},
             {"plan", plab::toJson(plan)},
             {"mode", optimizerModeId(mode)},
             {"adamw", plab::toJson(adamw)},
             {"steps", steps},
             {"batch_size", batch_size},
             {"grad_accum", grad_accum},
             {"seq_len", seq_len},
             {"lr_schedule", lr_schedule},
             {"warmup_steps", warmup_steps},
             {"min_lr_ratio", min_lr_ratio},
             {"grad_clip", grad_clip},
             {"eval_every", eval_every},
             {"eval_batches", eval_batches},
             {"layer_stats_every", layer_stats_every},
             {"update_window", update_window},
             {"checkpoint_every", checkpoint_every},
             {"resume_from", resume_from},
             {"seed", seed},
             {"device", device},
             {"threads", threads},
             {"reproducible", reproducible},
             {"output_dir", output_dir}};
  // Only where it applies: the other modes' config.json stays as it was.
  if (modeScalesLoss(mode))
    j["loss_scale"] = {{"init_scale", loss_scale_init}, {"growth_interval", loss_scale_growth_interval}};
  if (shadow_recipes) j["shadow_recipes"] = true;  // only when on: other runs' config.json unchanged
  if (!shadow_gemm_formats.empty()) {
    json formats = json::array();
    for (GemmFormat f : shadow_gemm_formats) formats.push_back(gemmFormatId(f));
    j["shadow_gemm_formats"] = formats;
  }
  return j;
}

namespace {

// A run config is at most three levels deep ("data.source.path"): a longer
// key is a mistake, and 50 000 parts once nested the run that deep and
// crashed the copy that followed.
constexpr size_t kMaxSweepKeyParts = 8;
constexpr size_t kMaxSweepKeyLength = 200;

// "adamw.lr" -> the value slot inside a run object (created if missing).
json& slotAt(json& run, const std::string& dottedKey) {
  if (dottedKey.size() > kMaxSweepKeyLength)
    throw ConfigError("run config: sweep key '" + textExcerpt(dottedKey) + "' is longer than " +
                      std::to_string(kMaxSweepKeyLength) + " characters");
  if (size_t(std::count(dottedKey.begin(), dottedKey.end(), '.')) >= kMaxSweepKeyParts)
    throw ConfigError("run config: sweep key '" + textExcerpt(dottedKey) + "' has more than " +
                      std::to_string(kMaxSweepKeyParts) + " dotted parts");
  // getline yields no part for "" (the slot would be the whole run, found by
  // fuzz_run_config) and drops a trailing empty one ("adamw.").
  if (dottedKey.empty() || dottedKey.back() == '.')
    throw ConfigError("run config: bad sweep key '" + textExcerpt(dottedKey) + "'");
  json* node = &run;
  std::stringstream ss(dottedKey);
  std::string part;
  while (std::getline(ss, part, '.')) {
    if (part.empty()) throw ConfigError("run config: bad sweep key '" + dottedKey + "'");
    if (node->is_null()) *node = json::object();  // "adamw.lr" without an "adamw" in the base
    if (!node->is_object()) throw ConfigError("run config: sweep key '" + dottedKey + "' does not name a field");
    node = &(*node)[part];
  }
  return *node;
}

std::string suffixFor(const std::string& key, const json& value) {
  if (value.is_string()) return value.get<std::string>();
  const auto dot = key.rfind('.');
  return (dot == std::string::npos ? key : key.substr(dot + 1)) + value.dump();
}

}  // namespace

std::vector<RunConfig> loadRunConfigs(const nlohmann::json& j) {
  // Each run is trained in turn; more than this is a typo, not a plan.
  constexpr uint64_t kMaxRunsPerFile = 1000;
  if (!j.is_object()) throw ConfigError("run config: expected a JSON object, got " + std::string(j.type_name()));
  std::vector<RunConfig> runs;
  if (j.contains("runs")) {
    if (j.size() != 1) throw ConfigError("run config: a {\"runs\": [...]} file must have no other keys");
    const json& list = j.at("runs");
    if (!list.is_array() || list.empty())
      throw ConfigError("run config: 'runs' must be a non-empty array of run objects");
    if (list.size() > kMaxRunsPerFile)
      throw ConfigError("run config: " + std::to_string(list.size()) + " runs; at most " +
                        std::to_string(kMaxRunsPerFile) + " per file");
    for (size_t i = 0; i < list.size(); ++i) {
      try {
        runs.push_back(RunConfig::fromJson(list[i]));
      } catch (const ConfigError& e) {
        throw ConfigError("runs[" + std::to_string(i) + "]: " + e.what());
      }
    }
  } else if (j.contains("sweep")) {
    for (auto it = j.begin(); it != j.end(); ++it)
      if (it.key() != "base" && it.key() != "sweep")
        throw ConfigError("run config: unknown key '" + it.key() + "' in a sweep file (expected base, sweep)");
    const json base = j.value("base", json::object());
    requireObject(base, "'base'");
    const json& sweep = j.at("sweep");
    requireObject(sweep, "'sweep'");
    if (sweep.empty()) throw ConfigError("run config: 'sweep' lists no field to vary");
    // Counted before anything is expanded: 9 fields x 10 values once built
    // 10^9 runs in memory.
    uint64_t total = 1;
    for (auto it = sweep.begin(); it != sweep.end(); ++it) {
      if (!it.value().is_array() || it.value().empty())
        throw ConfigError("run config: 'sweep." + it.key() + "' must be a non-empty array of values");
      total *= it.value().size();
      if (total > kMaxRunsPerFile)
        throw ConfigError("run config: the sweep makes more than " + std::to_string(kMaxRunsPerFile) +
                          " runs (the product of its value counts); split it into several files");
    }
    const std::string baseName = base.value("name", RunConfig{}.name);
    // Cartesian product over the swept fields, in the order they are listed.
    std::vector<std::pair<json, std::string>> expanded = {{base, baseName}};
    for (auto it = sweep.begin(); it != sweep.end(); ++it) {
      if (!it.value().is_array() || it.value().empty())
        throw ConfigError("run config: 'sweep." + it.key() + "' must be a non-empty array of values");
      std::vector<std::pair<json, std::string>> next;
      for (const auto& [run, name] : expanded) {
        for (const json& value : it.value()) {
          json variant = run;
          slotAt(variant, it.key()) = value;
          next.emplace_back(variant, name + "-" + suffixFor(it.key(), value));
        }
      }
      expanded = std::move(next);
    }
    for (auto& [run, name] : expanded) {
      run["name"] = name;
      try {
        runs.push_back(RunConfig::fromJson(run));
      } catch (const ConfigError& e) {
        throw ConfigError("sweep run '" + name + "': " + e.what());
      }
    }
  } else {
    runs.push_back(RunConfig::fromJson(j));
  }
  return runs;
}

RunConfig defaultRunConfig() {
  // Fine-tuning the embedded pretrained tiny GPT-2 at a small learning rate,
  // every parameter in bf16 (what model.to(torch.bfloat16) does): the case in
  // which plain bf16 AdamW loses most updates. Measured in
  // docs/default-experiment.md.
  RunConfig c;
  c.name = "tiny-gpt2-finetune";
  c.model.source = "embedded";
  c.plan.preset = PlanPreset::AllBf16;
  c.mode = OptimizerMode::Bf16Kahan;
  c.adamw.lr = 5e-5;
  c.adamw.weight_decay = 0.0;
  c.steps = 200;
  c.batch_size = 8;
  c.seq_len = 64;
  c.lr_schedule = "constant";
  c.warmup_steps = 10;
  c.eval_every = 50;
  c.eval_batches = 16;
  c.layer_stats_every = 5;
  c.update_window = 20;
  return c;
}

nlohmann::json defaultExperimentJson() {
  json base = defaultRunConfig().toJson();
  base.erase("output_dir");
  const std::string name = base.at("name").get<std::string>();
  json runs = json::array();
  const auto add = [&](OptimizerMode m, bool fp32Moments) {
    json run = base;
    run["mode"] = optimizerModeId(m);
    run["name"] = name + "-" + optimizerModeId(m) + (fp32Moments ? "-fp32-moments" : "");
    if (fp32Moments) run["adamw"]["moments"] = momentPrecisionId(MomentPrecision::Fp32);
    runs.push_back(std::move(run));
  };
  for (OptimizerMode m : allOptimizerModes()) add(m, false);
  // The two recipes that close the gap again with fp32 moments: with mixed,
  // they split each one's residual gap into compute, weight write and
  // moments (report/paired_gap.h, PairedGap::Attribution).
  add(OptimizerMode::Bf16Kahan, true);
  add(OptimizerMode::Bf16StochasticRounding, true);
  return {{"runs", runs}};
}

}  // namespace plab
