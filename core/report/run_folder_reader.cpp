#include "report/run_folder_reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <tuple>
#include <type_traits>

#include "report/run_figures.h"
#include "train/metrics_writer.h"
#include "util/atomic_file.h"
#include "util/errors.h"
#include "util/json_file.h"
#include "util/json_limits.h"

namespace plab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A side file of a killed run may be absent or half-written: either reads
// as null (defaults). One that is refused by the limits (not a regular
// file, too big, nested too deep, not UTF-8) makes the run unreadable,
// naming the file: it is not something this tool wrote.
json readSideFile(const fs::path& file) {
  JsonFile read = readJsonFile(file);
  if (read.status == JsonFileStatus::Refused) throw ConfigError(file.string() + " " + read.problem);
  return read.ok() ? std::move(read.value) : json(nullptr);
}

// There, whatever it is (a FIFO or a dangling link too: reading it says why
// the run cannot be read, instead of the run silently not being listed).
bool fileIsThere(const fs::path& file) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(file, ec)) && !fs::is_directory(file, ec);
}

// A whole number that fits T, or nullopt: 1e30 converted to int64 read back
// as -9223372036854775808 (the conversion is undefined past the range).
template <typename T>
std::optional<T> exactInteger(const json& v) {
  if (v.is_number_unsigned())
    return v.get<uint64_t>() <= uint64_t(std::numeric_limits<T>::max()) ? std::optional<T>(T(v.get<uint64_t>()))
                                                                          : std::nullopt;
  if (v.is_number_integer()) {
    const int64_t i = v.get<int64_t>();
    if (i < int64_t(std::numeric_limits<T>::min()) || (i > 0 && uint64_t(i) > uint64_t(std::numeric_limits<T>::max())))
      return std::nullopt;
    return T(i);
  }
  return std::nullopt;
}

// Lenient readers: the files were written by some version of this tool;
// what is missing or of the wrong type keeps the default. A number where a
// count belongs that is not a whole number in its range was never written
// by it: ConfigError naming the field (the caller adds the file).
template <typename T>
void readIf(const json& j, const char* key, T& out) {
  if (!j.is_object() || !j.contains(key)) return;
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    const json& v = j.at(key);
    if (!v.is_number()) return;
    const std::optional<T> whole = exactInteger<T>(v);
    if (!whole)
      throw ConfigError("'" + std::string(key) + "' is " + jsonExcerpt(v) +
                        ", not a whole number in range (out of range for a count)");
    out = *whole;
  } else {
    try {
      out = j.at(key).get<T>();
    } catch (const json::exception&) {
    }
  }
}

// runInfoFromStoredJson and the like, their errors naming the file.
template <typename F>
auto readingFile(const fs::path& file, F&& read) -> decltype(read()) {
  try {
    return read();
  } catch (const ConfigError& e) {
    throw ConfigError(file.string() + ": " + e.what());
  }
}

double fieldOr(const json& j, const char* key, double fallback) {
  if (!j.is_object() || !j.contains(key)) return fallback;
  const json& v = j.at(key);
  if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();  // written for NaN
  return v.is_number() ? v.get<double>() : fallback;
}

std::optional<double> optionalNumber(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j.at(key).is_number()) return std::nullopt;
  return j.at(key).get<double>();
}

MemoryBreakdown memoryOr(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return {};
  try {
    return memoryBreakdownFromJson(j.at(key));
  } catch (const Error&) {
    return {};
  }
}

}  // namespace

std::vector<MemoryBreakdown> rankMemoryFromJson(const json& document) {
  std::vector<MemoryBreakdown> out;
  if (!document.is_object() || !document.contains("rank_memory") || !document.at("rank_memory").is_array()) return out;
  try {
    for (const json& rank : document.at("rank_memory")) out.push_back(memoryBreakdownFromJson(rank));
  } catch (const std::exception&) {
    out.clear();  // one bad entry: the ranks cannot be told apart, show none
  }
  return out;
}

RunInfo runInfoFromStoredJson(const json& j) {
  RunInfo i;
  readIf(j, "run_name", i.runName);
  readIf(j, "started_at", i.startedAt);
  readIf(j, "device", i.device);
  readIf(j, "model_type", i.modelType);
  readIf(j, "tokenizer", i.tokenizer);
  readIf(j, "parameter_count", i.parameterCount);
  readIf(j, "bf16_parameter_count", i.bf16ParameterCount);
  readIf(j, "layers", i.layers);
  i.predictedMemory = memoryOr(j, "predicted_memory");
  i.measuredMemory = memoryOr(j, "measured_memory");
  i.fp32Baseline = memoryOr(j, "fp32_baseline");
  readIf(j, "optimizer_mode", i.optimizerMode);
  readIf(j, "moment_precision", i.momentPrecision);
  readIf(j, "weight_decay_rounded_away", i.weightDecayRoundedAway);
  if (j.contains("weight_decay_effect")) i.weightDecayEffect = decayAssessmentFromJson(j.at("weight_decay_effect"));
  readIf(j, "update_window", i.updateWindow);
  readIf(j, "statistics_bytes", i.statisticsBytes);
  readIf(j, "tokens_per_step", i.tokensPerStep);
  readIf(j, "train_tokens", i.trainTokens);
  readIf(j, "blas", i.blas);
  readIf(j, "libtorch_version", i.libtorchVersion);
  readIf(j, "cuda_kernels_linked", i.cudaKernelsLinked);
  readIf(j, "intra_op_threads", i.intraOpThreads);
  readIf(j, "cpu_bf16_matmul", i.cpuBf16Gemm);
  readIf(j, "cpu_capability", i.cpuCapability);
  readIf(j, "mkl_cnr", i.mklCnr);
  i.rankMemory = rankMemoryFromJson(j);
  if (j.is_object() && j.contains("optimizer_state_sharded") && j.at("optimizer_state_sharded").is_boolean())
    i.optimizerStateSharded = j.at("optimizer_state_sharded").get<bool>();
  readIf(j, "cpu_model", i.cpuModel);
  readIf(j, "libc", i.libc);
  return i;
}

namespace {

StoredRunStatus statusFromId(const std::string& id) {
  if (id == "completed") return StoredRunStatus::Completed;
  if (id == "stopped") return StoredRunStatus::Stopped;
  if (id == "failed") return StoredRunStatus::Failed;
  return StoredRunStatus::Incomplete;
}

}  // namespace

RunResult runResultFromStoredJson(const json& j) {
  RunResult r;
  readIf(j, "message", r.message);
  readIf(j, "steps_done", r.stepsDone);
  r.finalLoss = fieldOr(j, "final_loss", 0);
  r.finalValLoss = optionalNumber(j, "final_val_loss");
  r.meanTokensPerSecond = fieldOr(j, "mean_tokens_per_second", 0);
  r.meanRoundedAwayFraction = fieldOr(j, "mean_rounded_away_fraction", 0);
  r.meanUpdateLost = optionalNumber(j, "mean_update_lost");
  r.meanUpdateError = optionalNumber(j, "mean_update_error");
  r.meanUpdateLostStdError = optionalNumber(j, "mean_update_lost_se");  // absent before it was recorded
  r.meanUpdateNoise = optionalNumber(j, "mean_update_noise");
  r.meanMomentErrorM = optionalNumber(j, "mean_moment_error_m");  // quantized moment stores only
  r.meanMomentErrorV = optionalNumber(j, "mean_moment_error_v");
  r.memory = memoryOr(j, "memory");
  r.memorySavedFraction = fieldOr(j, "memory_saved_fraction", 0);
  if (j.contains("step_peak_bytes") && j["step_peak_bytes"].is_number_integer())
    r.stepPeakBytes = exactInteger<int64_t>(j["step_peak_bytes"]);
  if (j.contains("training_peak_bytes") && j["training_peak_bytes"].is_number_integer())
    r.trainingPeakBytes = exactInteger<int64_t>(j["training_peak_bytes"]);
  if (j.contains("process_peak_bytes") && j["process_peak_bytes"].is_number_integer())
    r.processPeakBytes = exactInteger<int64_t>(j["process_peak_bytes"]);
  if (j.contains("peak_probe_steps") && j["peak_probe_steps"].is_array())
    for (const json& s : j["peak_probe_steps"])
      if (const auto step = exactInteger<int64_t>(s)) r.peakProbeSteps.push_back(*step);
  r.rankMemory = rankMemoryFromJson(j);
  if (j.is_object() && j.contains("world_size") && j.at("world_size").is_number_integer())
    if (const auto world = exactInteger<int>(j.at("world_size"))) r.worldSize = *world;
  return r;
}

namespace {

int64_t modificationTime(const fs::path& file) {
  struct stat st {};
  return ::stat(file.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_mtime) : 0;
}

void addRunsOfSweep(const fs::path& dir, std::vector<fs::path>& out) {
  std::error_code ec;
  const fs::path runs = dir / "runs";
  if (!fs::is_directory(runs, ec)) return;
  for (const fs::directory_entry& e : fs::directory_iterator(runs, ec))
    if (isRunFolder(e.path())) out.push_back(e.path());
}

}  // namespace

std::string storedRunStatusId(StoredRunStatus s) {
  switch (s) {
    case StoredRunStatus::Completed: return "completed";
    case StoredRunStatus::Stopped: return "stopped";
    case StoredRunStatus::Failed: return "failed";
    case StoredRunStatus::Incomplete: return "incomplete";
  }
  return "unknown";
}

bool isRunFolder(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec) && fileIsThere(dir / "config.json") &&
         (fileIsThere(dir / "metrics.jsonl") || fileIsThere(dir / "summary.json"));
}

std::vector<fs::path> findRunFolders(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (isRunFolder(dir)) {
    out.push_back(dir);
  } else if (fs::is_directory(dir / "runs", ec)) {
    addRunsOfSweep(dir, out);
  } else {
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
      if (!e.is_directory(ec)) continue;
      if (isRunFolder(e.path())) out.push_back(e.path());
      else addRunsOfSweep(e.path(), out);
    }
  }
  std::vector<std::pair<int64_t, fs::path>> keyed;
  for (const fs::path& p : out) keyed.emplace_back(modificationTime(p / "config.json"), p);
  std::sort(keyed.begin(), keyed.end());
  out.clear();
  for (auto& [time, path] : keyed) out.push_back(std::move(path));
  return out;
}

StoredRun readRunFolder(const fs::path& dir) {
  StoredRun run;
  run.folder = dir;
  const JsonFile config = readJsonFile(dir / "config.json");
  if (!config.ok()) throw ConfigError((dir / "config.json").string() + " " + config.problem);
  try {
    run.record.config = RunConfig::fromJson(config.value);
    // Folders written before adamw.torch_step existed ran torch's for-loop
    // form: what they hold, not today's default, so that an fp32 reference
    // is matched by the arithmetic it really used.
    const nlohmann::json& adamw = config.value.contains("adamw") ? config.value.at("adamw") : nlohmann::json();
    if (!adamw.is_object() || !adamw.contains("torch_step")) run.record.config.adamw.torchStep = TorchStep::ForLoop;
  } catch (const ConfigError& e) {
    throw ConfigError((dir / "config.json").string() + ": " + e.what());
  }
  run.record.config.output_dir = dir.string();  // where it is now, not where it was made
  run.startedAt = modificationTime(dir / "config.json");

  if (fileIsThere(dir / "metrics.jsonl"))
    run.record.steps = readMetricsJsonl(dir / "metrics.jsonl", &run.metricsLinesSkipped);
  const json info = readSideFile(dir / "run_info.json");
  run.record.info = readingFile(dir / "run_info.json", [&] { return runInfoFromStoredJson(info); });
  if (run.record.info.runName.empty()) run.record.info.runName = run.record.config.name;

  const json summary = readSideFile(dir / "summary.json");
  std::string statusId;
  readIf(summary, "status", statusId);
  run.status = statusFromId(statusId);
  if (run.status == StoredRunStatus::Incomplete) {
    run.record.incomplete = true;
    run.record.result = report::resultFromSteps(run.record.info, run.record.steps);
    run.record.result.message = "no summary.json (still running elsewhere, or killed)";
    if (!run.record.info.rankMemory.empty()) {  // the ranks it started with
      run.record.result.worldSize = static_cast<int>(run.record.info.rankMemory.size());
      run.record.result.rankMemory = run.record.info.rankMemory;
    }
  } else {
    run.record.result = readingFile(dir / "summary.json", [&] { return runResultFromStoredJson(summary); });
    run.record.result.status = run.status == StoredRunStatus::Completed ? RunStatus::Completed
                               : run.status == StoredRunStatus::Failed  ? RunStatus::Failed
                                                                        : RunStatus::Stopped;
  }
  run.display = readRunDisplay(dir, &run.displayProblem);
  run.record.fp32Reference = run.display.fp32Reference;
  return run;
}

RunDisplay readRunDisplay(const fs::path& runFolder, std::string* problem) {
  RunDisplay d;
  const JsonFile read = readJsonFile(runFolder / kRunDisplayFileName);
  if (problem && read.status != JsonFileStatus::Read && read.status != JsonFileStatus::Missing)
    *problem = (runFolder / kRunDisplayFileName).string() + " " + read.problem;
  const json& j = read.value;
  readIf(j, "name", d.name);
  readIf(j, "hidden", d.hidden);
  readIf(j, "fp32_reference", d.fp32Reference);
  return d;
}

void writeRunDisplay(const fs::path& runFolder, const RunDisplay& display) {
  json j = {{"name", display.name}, {"hidden", display.hidden}};
  if (!display.fp32Reference.empty()) j["fp32_reference"] = display.fp32Reference;
  writeJsonFileAtomically(runFolder / kRunDisplayFileName, j);
}

}  // namespace plab
