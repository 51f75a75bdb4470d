#include "train/checkpoint.h"

#include <torch/torch.h>

#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include "model/bf16_linear.h"
#include "model/model_factory.h"
#include "model/safetensors.h"
#include "precision/loss_scale/dynamic_loss_scale.h"
#include "train/checkpoint_manifest.h"
#include "train/trajectory_settings.h"
#include "util/atomic_file.h"
#include "util/errors.h"
#include "util/json_file.h"
#include "util/json_limits.h"
#include "util/regular_file.h"

namespace plab {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

[[noreturn]] void refuse(const fs::path& file, const std::string& problem) {
  throw ConfigError("cannot resume: " + file.string() + ": " + problem);
}

// An integer exactly: 1e30, 5.0, "5", true and values beyond int64 are refused.
int64_t integerField(const json& j, const std::string& field, const fs::path& file) {
  if (j.is_number_unsigned()) {
    if (j.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
      refuse(file, "'" + field + "' is " + jsonExcerpt(j) + ", beyond any step count");
    return int64_t(j.get<uint64_t>());
  }
  if (!j.is_number_integer()) refuse(file, "'" + field + "' must be an integer, not " + jsonExcerpt(j));
  return j.get<int64_t>();
}

void requireKeys(const json& j, const std::string& what, const fs::path& file, const std::set<std::string>& required,
                 const std::set<std::string>& optional = {}) {
  if (!j.is_object()) refuse(file, (what.empty() ? "the file" : "'" + what + "'") + " must be a JSON object");
  const std::string prefix = what.empty() ? "" : what + ".";
  for (const std::string& key : required)
    if (!j.contains(key)) refuse(file, "'" + prefix + key + "' is missing");
  for (const auto& [key, value] : j.items())
    if (!required.count(key) && !optional.count(key))
      refuse(file, "unknown field '" + prefix + textExcerpt(key) + "'");
}

// std::mt19937_64's text form: 312 state words and an index. Accepted only
// when it reads back as exactly the text given (no extra, no missing word)
// and is not all zero (a state the generator never reaches: it would draw
// batch 0 forever).
bool readSampler(const std::string& text, std::mt19937_64& sampler) {
  std::istringstream in(text);
  in >> sampler;
  if (!in) return false;
  std::ostringstream back;
  back << sampler;
  if (back.str() != text) return false;
  std::istringstream words(text);
  std::string word;
  for (size_t i = 0; i < std::mt19937_64::state_size && words >> word; ++i)
    if (word != "0") return true;
  return false;
}

std::string shapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string safetensorsDtype(torch::ScalarType t) {
  switch (t) {
    case torch::kFloat32: return "F32";
    case torch::kBFloat16: return "BF16";
    case torch::kFloat16: return "F16";
    case torch::kFloat64: return "F64";
    case torch::kUInt8: return "U8";  // quantized moments' codes (adamw.moments 8bit, 4bit, fp8)
    default: return c10::toString(t);
  }
}

struct ExpectedTensor {
  std::string name;
  torch::ScalarType dtype;
  std::vector<int64_t> shape;
};

// The file holds exactly `expected`: no tensor missing, none unknown, each
// in the expected shape and dtype.
void checkTensorSet(const SafetensorsFile& file, const std::vector<ExpectedTensor>& expected,
                    const std::string& owner) {
  std::set<std::string> known;
  for (const ExpectedTensor& e : expected) {
    known.insert(e.name);
    if (!file.contains(e.name)) refuse(file.path(), "tensor '" + e.name + "' is missing");
    const SafetensorsEntry& entry = file.entry(e.name);
    if (entry.shape != e.shape)
      refuse(file.path(), "tensor '" + e.name + "' has shape " + shapeText(entry.shape) + ", " + owner + " has " +
                              shapeText(e.shape));
    if (entry.dtype != safetensorsDtype(e.dtype))
      refuse(file.path(), "tensor '" + e.name + "' is " + entry.dtype + ", " + owner + " keeps it in " +
                              safetensorsDtype(e.dtype) + " (precision plan and mode)");
  }
  for (const std::string& name : file.names())
    if (!known.count(name))
      refuse(file.path(), "unknown tensor '" + textExcerpt(name) + "': " + owner + " has no such state");
}

// Field by field, so that the message names the first that differs.
void checkSameFields(const json& saved, const json& live, const std::string& prefix, const fs::path& file,
                     const std::string& liveOwner, const std::string& note = "") {
  if (!saved.is_object()) refuse(file, "'" + prefix + "' must be a JSON object");
  for (const auto& [key, value] : live.items()) {
    const std::string field = prefix.empty() ? key : prefix + "." + key;
    if (!saved.contains(key))
      refuse(file, "'" + field + "' is missing (" + liveOwner + " has " + jsonExcerpt(value) + ")" + note);
    if (saved.at(key) != value)
      refuse(file, "'" + field + "' is " + jsonExcerpt(saved.at(key)) + ", " + liveOwner + " has " + jsonExcerpt(value) +
                       note);
  }
  for (const auto& [key, value] : saved.items())
    if (!live.contains(key))
      refuse(file, "unknown field '" + (prefix.empty() ? "" : prefix + ".") + textExcerpt(key) + "'");
}

// "checkpoint-40" -> "40"; "" for a folder named otherwise (renamed copies are fine).
std::string stepInFolderName(const fs::path& dir) {
  fs::path d = dir;
  if (d.filename().empty()) d = d.parent_path();
  const std::string name = d.filename().string();
  const std::string prefix = "checkpoint-";
  if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size()) return "";
  const std::string digits = name.substr(prefix.size());
  for (char c : digits)
    if (c < '0' || c > '9') return "";
  return digits;
}

}  // namespace

TrainerState readTrainerState(const fs::path& file) {
  std::error_code ec;
  const auto status = fs::status(file, ec);
  if (!ec && fs::is_regular_file(status)) {
    const auto size = fs::file_size(file, ec);
    if (!ec && size > kMaxTrainerStateBytes)
      refuse(file, "is " + std::to_string(size) + " bytes, more than a trainer state can be (" +
                       std::to_string(kMaxTrainerStateBytes) + ")");
  }
  std::string problem;
  const std::optional<std::string> text = readRegularFile(file, problem);
  if (!text) refuse(file, problem);
  if (text->size() > kMaxTrainerStateBytes) refuse(file, "grew beyond " + std::to_string(kMaxTrainerStateBytes) + " bytes while read");
  json j;
  if (const std::string notJson = parseJsonText(*text, j); !notJson.empty()) refuse(file, notJson);

  requireKeys(j, "", file, {"step", "data_sampler", "optimizer", "trajectory"}, {"loss_scale", "cpu_bf16_gemm"});
  TrainerState state;
  state.step = integerField(j.at("step"), "step", file);
  const json& sampler = j.at("data_sampler");
  std::mt19937_64 probe;
  if (!sampler.is_string() || !readSampler(sampler.get<std::string>(), probe))
    refuse(file, "'data_sampler' is not a saved std::mt19937_64 state (" + jsonExcerpt(sampler) + ")");
  state.dataSampler = sampler.get<std::string>();

  const json& optimizer = j.at("optimizer");
  requireKeys(optimizer, "optimizer", file, {"step", "params"});
  state.optimizerStep = integerField(optimizer.at("step"), "optimizer.step", file);
  const json& params = optimizer.at("params");
  if (!params.is_object()) refuse(file, "'optimizer.params' must be a JSON object of step counts by parameter name");
  for (const auto& [name, count] : params.items())
    state.parameterSteps[name] = integerField(count, "optimizer.params." + textExcerpt(name), file);
  state.trajectory = j.at("trajectory");
  if (!state.trajectory.is_object()) refuse(file, "'trajectory' must be a JSON object");
  if (j.contains("cpu_bf16_gemm")) {
    const json& path = j.at("cpu_bf16_gemm");
    if (!path.is_string() || (path.get<std::string>() != "native" && path.get<std::string>() != "upcast"))
      refuse(file, "'cpu_bf16_gemm' must be \"native\" or \"upcast\", not " + jsonExcerpt(path));
    state.cpuBf16Gemm = path.get<std::string>();
  }
  if (j.contains("loss_scale")) {
    state.lossScale = j.at("loss_scale");
    try {
      DynamicLossScale::fromJson(state.lossScale);
    } catch (const ConfigError& e) {
      refuse(file, "'loss_scale': " + std::string(e.what()));
    }
  }
  return state;
}

namespace {

// Optimizer: PrecisionAdamW or ShardedAdamW (the same checkpoint interface).
template <typename Optimizer>
void writeCheckpointOf(const fs::path& dir, CausalLM& model, const Optimizer& optimizer, const RunConfig& config,
                       int64_t step, const std::mt19937_64& sampler, const json& lossScale) {
  // First: a sharded state is gathered from every rank, which must not wait on this rank's disk.
  const auto state = optimizer.stateTensors();
  saveCheckpoint(model, dir);
  writeSafetensors(dir / "optimizer.safetensors", state);
  std::ostringstream samplerText;
  samplerText << sampler;
  json trainerState = {{"step", step},
                       {"data_sampler", samplerText.str()},
                       {"optimizer", optimizer.stepCounts()},
                       {"trajectory", trajectorySettings(config)}};
  if (!lossScale.is_null()) trainerState["loss_scale"] = lossScale;
  // A resumed run multiplies as this one did (the two paths sum in another order).
  trainerState["cpu_bf16_gemm"] = cpuBf16GemmPath() == Bf16GemmPath::Native ? "native" : "upcast";
  writeJsonFileAtomically(dir / "trainer_state.json", trainerState);
  // Last: a folder without it (a kill mid-checkpoint) is refused as incomplete.
  writeCheckpointManifest(dir);
}

template <typename Optimizer>
int64_t resumeFromCheckpointOf(const fs::path& dir, const RunConfig& config, CausalLM& model, Optimizer& optimizer,
                               std::mt19937_64& sampler, json* lossScale) {
  // Before anything in it is read: every file as it was written.
  verifyCheckpointManifest(dir);
  for (const char* name : {"trainer_state.json", "optimizer.safetensors", "model.safetensors"})
    if (!fs::is_regular_file(dir / name))
      throw ConfigError("cannot resume: " + dir.string() + " has no " + name +
                        " (give a checkpoint-N folder written by checkpoint_every)");
  const fs::path stateFile = dir / "trainer_state.json";
  const TrainerState state = readTrainerState(stateFile);

  // The step: training continues at step + 1, up to the run's steps.
  const std::string n = std::to_string(state.step);
  if (state.step < 1) refuse(stateFile, "'step' is " + n + "; a checkpoint is written after step 1 or later");
  if (state.step == config.steps)
    refuse(stateFile, "'step' is " + n + ": the run's " + std::to_string(config.steps) +
                          " steps all ended there; raise 'steps' (--steps) to train further");
  if (state.step > config.steps)
    refuse(stateFile, "'step' is " + n + ", beyond the run's " + std::to_string(config.steps) + " steps");
  if (const std::string folderStep = stepInFolderName(dir); !folderStep.empty() && folderStep != n)
    refuse(stateFile, "'step' is " + n + " in a folder named checkpoint-" + folderStep);

  // Step counts: the optimizer's and every parameter's equal the step (each
  // step gives every parameter of a causal LM a gradient), less the steps
  // the loss scaler skipped in a mode that scales the loss.
  const bool scalesLoss = modeScalesLoss(config.mode);
  const std::string optimizerSteps = std::to_string(state.optimizerStep);
  if (scalesLoss ? (state.optimizerStep < 0 || state.optimizerStep > state.step) : state.optimizerStep != state.step)
    refuse(stateFile, "'optimizer.step' is " + optimizerSteps + ", 'step' is " + n);
  const json liveParams = optimizer.stepCounts().at("params");
  for (const auto& [name, unused] : liveParams.items()) {
    const auto it = state.parameterSteps.find(name);
    if (it == state.parameterSteps.end()) refuse(stateFile, "'optimizer.params' has no step count for '" + name + "'");
    if (it->second != state.optimizerStep)
      refuse(stateFile, "'optimizer.params." + name + "' is " + std::to_string(it->second) +
                            (scalesLoss ? ", 'optimizer.step' is " + optimizerSteps : ", 'step' is " + n));
  }
  if (scalesLoss && state.lossScale.is_null())
    refuse(stateFile, "'loss_scale' is missing (mode " + optimizerModeId(config.mode) + " scales the loss)");
  if (!scalesLoss && !state.lossScale.is_null())
    refuse(stateFile, "'loss_scale' is there, but mode " + optimizerModeId(config.mode) + " does not scale the loss");
  for (const auto& [name, count] : state.parameterSteps)
    if (!liveParams.contains(name))
      refuse(stateFile, "'optimizer.params' counts '" + textExcerpt(name) + "', a parameter this run's model does not have");

  if (const std::string change = trajectoryChange(state.trajectory, config, state.step); !change.empty())
    refuse(stateFile, "'trajectory': " + change + "; resuming would train another run under its name");

  // The model: its config.json (when there) and its tensors are this run's.
  const fs::path modelConfig = dir / "config.json";
  std::error_code ec;
  if (fs::exists(fs::symlink_status(modelConfig, ec))) {
    std::optional<ModelConfig> saved;
    try {
      saved = ModelConfig::fromFile(modelConfig);
    } catch (const Error& e) {
      throw ConfigError(std::string("cannot resume: ") + e.what());
    }
    const int64_t savedCount = saved->parameterCount(), liveCount = model.config().parameterCount();
    const std::string note = savedCount == liveCount ? ""
                             : "; it is another model's checkpoint (" + std::to_string(savedCount) +
                                   " parameters, the run's model has " + std::to_string(liveCount) + ")";
    checkSameFields(saved->toJson(), model.config().toJson(), "", modelConfig, "the run's model", note);
  }
  std::vector<ExpectedTensor> weights;
  for (const auto& p : model.named_parameters())
    weights.push_back({p.key(), p.value().scalar_type(), p.value().sizes().vec()});
  std::vector<ExpectedTensor> optimizerState;
  for (const auto& t : optimizer.stateLayout()) optimizerState.push_back({t.name, t.dtype, t.shape});

  try {
    const SafetensorsFile modelFile(dir / "model.safetensors");
    const SafetensorsFile optimizerFile(dir / "optimizer.safetensors");
    checkTensorSet(modelFile, weights, "the run's model");
    checkTensorSet(optimizerFile, optimizerState, "this run's optimizer (mode " + optimizerModeId(config.mode) + ")");

    // Everything checked: load.
    {
      torch::NoGradGuard noGrad;
      for (auto& p : model.named_parameters()) p.value().copy_(modelFile.load(p.key()));
    }
    json counts = {{"step", state.optimizerStep}, {"params", json::object()}};
    for (const auto& [name, count] : state.parameterSteps) counts["params"][name] = count;
    optimizer.loadState([&](const std::string& name) { return optimizerFile.load(name); }, counts);
  } catch (const SafetensorsError& e) {
    throw ConfigError(std::string("cannot resume: ") + e.what());
  }
  if (!readSampler(state.dataSampler, sampler)) refuse(stateFile, "'data_sampler' does not read back");
  if (lossScale) *lossScale = state.lossScale;
  // The bf16 products' path of the run that wrote it (older checkpoints: the
  // CPU's default, all there was then), unless PLAB_BF16_GEMM forces one.
  if (!cpuBf16GemmPathForced())
    setChosenCpuBf16GemmPath(state.cpuBf16Gemm == "upcast"   ? Bf16GemmPath::Upcast
                             : state.cpuBf16Gemm == "native" ? Bf16GemmPath::Native
                                                             : cpuBf16GemmDefault(),
                             "as the run that wrote the checkpoint took it");
  return state.step;
}

}  // namespace

void writeCheckpoint(const fs::path& dir, CausalLM& model, const PrecisionAdamW& optimizer, const RunConfig& config,
                     int64_t step, const std::mt19937_64& sampler, const json& lossScale) {
  writeCheckpointOf(dir, model, optimizer, config, step, sampler, lossScale);
}

void writeCheckpoint(const fs::path& dir, CausalLM& model, const ShardedAdamW& optimizer, const RunConfig& config,
                     int64_t step, const std::mt19937_64& sampler, const json& lossScale) {
  writeCheckpointOf(dir, model, optimizer, config, step, sampler, lossScale);
}

int64_t resumeFromCheckpoint(const fs::path& dir, const RunConfig& config, CausalLM& model, PrecisionAdamW& optimizer,
                             std::mt19937_64& sampler, json* lossScale) {
  return resumeFromCheckpointOf(dir, config, model, optimizer, sampler, lossScale);
}

int64_t resumeFromCheckpoint(const fs::path& dir, const RunConfig& config, CausalLM& model, ShardedAdamW& optimizer,
                             std::mt19937_64& sampler, json* lossScale) {
  return resumeFromCheckpointOf(dir, config, model, optimizer, sampler, lossScale);
}

}  // namespace plab
