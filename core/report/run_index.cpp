#include "report/run_index.h"

#include <sys/stat.h>

#include "report/run_figures.h"
#include "report/scalar_steps.h"
#include "util/atomic_file.h"
#include "util/errors.h"
#include "util/json_file.h"

namespace plab::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kFormat = "precision-lab run index";
constexpr int kVersion = kRunIndexVersion;
// The files an index is derived from (display.json is read on its own:
// renaming or hiding a run does not make its index stale).
constexpr const char* kSources[] = {"config.json", "run_info.json", "summary.json", "metrics.jsonl"};

// Size and modification time (ns) of each source, [-1, -1] when absent.
json sourceStamp(const fs::path& dir) {
  json stamp = json::object();
  for (const char* name : kSources) {
    struct stat st {};
    if (::stat((dir / name).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      stamp[name] = {-1, -1};
      continue;
    }
    const int64_t ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    stamp[name] = {static_cast<int64_t>(st.st_size), ns};
  }
  return stamp;
}

json indexJson(const fs::path& dir, const StoredRun& run) {
  json info = toJson(run.record.info);
  info.erase("modules");  // the layer tree comes from the model, not from stored runs
  return {{"format", kFormat},
          {"version", kVersion},
          {"sources", sourceStamp(dir)},
          {"config", run.record.config.toJson()},
          {"info", std::move(info)},
          {"status", storedRunStatusId(run.status)},
          {"result", run.status == StoredRunStatus::Incomplete ? json(nullptr) : toJson(run.record.result)},
          {"started_at", run.startedAt},
          {"metrics_lines_skipped", run.metricsLinesSkipped},
          {"steps", scalarStepsToJson(run.record.steps)}};
}

StoredRunStatus statusOf(const std::string& id) {
  for (StoredRunStatus s : {StoredRunStatus::Completed, StoredRunStatus::Stopped, StoredRunStatus::Failed,
                            StoredRunStatus::Incomplete})
    if (storedRunStatusId(s) == id) return s;
  throw ConfigError("index: unknown status '" + id + "'");
}

RunStatus resultStatusOf(StoredRunStatus s) {
  return s == StoredRunStatus::Completed ? RunStatus::Completed
         : s == StoredRunStatus::Failed  ? RunStatus::Failed
                                         : RunStatus::Stopped;
}

// The run the index describes, as readRunFolder would read the folder.
StoredRun runFromIndex(const fs::path& dir, const json& j) {
  StoredRun run;
  run.folder = dir;
  run.record.config = RunConfig::fromJson(j.at("config"));
  run.record.config.output_dir = dir.string();  // where it is now, not where it was made
  run.record.info = runInfoFromStoredJson(j.at("info"));
  if (run.record.info.runName.empty()) run.record.info.runName = run.record.config.name;
  run.status = statusOf(j.at("status").get<std::string>());
  run.startedAt = j.at("started_at").get<int64_t>();
  run.metricsLinesSkipped = j.at("metrics_lines_skipped").get<size_t>();
  run.record.steps = scalarStepsFromJson(j.at("steps"));
  if (run.status == StoredRunStatus::Incomplete) {
    run.record.incomplete = true;
    run.record.result = resultFromSteps(run.record.info, run.record.steps);
    run.record.result.message = "no summary.json (still running elsewhere, or killed)";
    if (!run.record.info.rankMemory.empty()) {
      run.record.result.worldSize = static_cast<int>(run.record.info.rankMemory.size());
      run.record.result.rankMemory = run.record.info.rankMemory;
    }
  } else {
    run.record.result = runResultFromStoredJson(j.at("result"));
    run.record.result.status = resultStatusOf(run.status);
  }
  run.display = readRunDisplay(dir, &run.displayProblem);
  run.record.fp32Reference = run.display.fp32Reference;
  return run;
}

}  // namespace

void writeRunIndex(const fs::path& dir, const StoredRun& run) {
  StoredRun scalar = run;
  scalar.record.steps = scalarSteps(run.record.steps);
  // Read by the tool alone: no indentation to scan past.
  writeFileAtomically(dir / kRunIndexFileName,
                      indexJson(dir, scalar).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

void indexRunFolder(const fs::path& dir) { writeRunIndex(dir, readRunFolder(dir)); }

std::optional<StoredRun> readRunIndex(const fs::path& dir) {
  const JsonFile read = readJsonFile(dir / kRunIndexFileName);
  if (!read.ok()) return std::nullopt;
  const json& j = read.value;
  try {
    if (!j.is_object() || j.value("format", "") != kFormat || j.value("version", 0) != kVersion) return std::nullopt;
    if (!j.contains("sources") || j.at("sources") != sourceStamp(dir)) return std::nullopt;  // stale
    return runFromIndex(dir, j);
  } catch (const std::exception&) {
    return std::nullopt;  // not an index this version wrote: the files themselves say what the run is
  }
}

ListedRun readRunForListing(const fs::path& dir, bool writeMissingIndex) {
  if (std::optional<StoredRun> indexed = readRunIndex(dir)) return {std::move(*indexed), true};
  ListedRun listed{readRunFolder(dir), false};
  if (writeMissingIndex && listed.run.status != StoredRunStatus::Incomplete) {
    try {
      writeRunIndex(dir, listed.run);
    } catch (const std::exception&) {
      // A read-only folder lists as well, only more slowly next time.
    }
  }
  listed.run.record.steps = scalarSteps(listed.run.record.steps);
  return listed;
}

}  // namespace plab::report
