#include "report/run_index.h"

#include <sys/stat.h>

#include <cstdio>

#include "report/run_figures.h"
#include "report/scalar_steps.h"
#include "util/atomic_file.h"
#include "util/errors.h"
#include "util/json_file.h"
#include "util/regular_file.h"

namespace plab::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kFormat = "precision-lab run index";
constexpr int kVersion = kRunIndexVersion;
// A million steps' columns: far beyond any run's, and a bound on what a
// forged index can make the reader take.
constexpr uint64_t kMaxColumnsBytes = 1000000ull * kPackedStepBytes;
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

// 64-bit FNV-1a of the columns, as 16 hex digits.
std::string digestOf(std::string_view bytes) {
  uint64_t h = 1469598103934665603ull;
  for (const char c : bytes) {
    h ^= static_cast<uint8_t>(c);
    h *= 1099511628211ull;
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

json indexJson(const fs::path& dir, const StoredRun& run, const PackedSteps& packed) {
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
          {"steps", packed.sparse},
          {"columns", {{"file", kRunIndexColumnsFileName},
                       {"bytes", packed.columns.size()},
                       {"fnv1a64", digestOf(packed.columns)}}}};
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
StoredRun runFromIndex(const fs::path& dir, const json& j, std::string_view columns) {
  StoredRun run;
  run.folder = dir;
  run.record.config = RunConfig::fromJson(j.at("config"));
  run.record.config.output_dir = dir.string();  // where it is now, not where it was made
  run.record.info = runInfoFromStoredJson(j.at("info"));
  if (run.record.info.runName.empty()) run.record.info.runName = run.record.config.name;
  run.status = statusOf(j.at("status").get<std::string>());
  run.startedAt = j.at("started_at").get<int64_t>();
  run.metricsLinesSkipped = j.at("metrics_lines_skipped").get<size_t>();
  run.record.steps = unpackScalarSteps(j.at("steps"), columns);
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
  const PackedSteps packed = packScalarSteps(run.record.steps);  // layers are not packed
  // The columns first: an index.json is never newer than its columns, and
  // one left from before a crash does not match them (its digest).
  writeFileAtomically(dir / kRunIndexColumnsFileName, packed.columns);
  // Read by the tool alone: no indentation to scan past.
  writeFileAtomically(dir / kRunIndexFileName,
                      indexJson(dir, run, packed).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

void indexRunFolder(const fs::path& dir) { writeRunIndex(dir, readRunFolder(dir)); }

std::optional<StoredRun> readRunIndex(const fs::path& dir) {
  const JsonFile read = readJsonFile(dir / kRunIndexFileName);
  if (!read.ok()) return std::nullopt;
  const json& j = read.value;
  try {
    if (!j.is_object() || j.value("format", "") != kFormat || j.value("version", 0) != kVersion) return std::nullopt;
    if (!j.contains("sources") || j.at("sources") != sourceStamp(dir)) return std::nullopt;  // stale
    const json& c = j.at("columns");
    const uint64_t bytes = c.at("bytes").get<uint64_t>();
    if (bytes > kMaxColumnsBytes) return std::nullopt;
    std::string problem;
    const std::optional<std::string> columns = readRegularFile(dir / kRunIndexColumnsFileName, problem, kMaxColumnsBytes);
    if (!columns || columns->size() != bytes || digestOf(*columns) != c.at("fnv1a64").get<std::string>())
      return std::nullopt;  // missing, refused, or not the columns this index was written with
    return runFromIndex(dir, j, *columns);
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
