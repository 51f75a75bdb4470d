#pragma once
// Reads run folders back from disk: the folders the trainer streams into
// (config.json, run_info.json, metrics.jsonl, summary.json) whether the GUI,
// the CLI or another machine made them, finished or not. Torch-free and
// Qt-free: the desktop app lists a workspace with it, tests and tools can too.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "report/run_report.h"

namespace plab {

// How a stored run ended. Incomplete: no summary.json (still running in
// another process, or killed); its steps are whatever reached the disk.
enum class StoredRunStatus { Completed, Stopped, Failed, Incomplete };
std::string storedRunStatusId(StoredRunStatus s);  // "completed", ..., "incomplete"

// What the user chose to call a run, whether it is hidden and which fp32
// run it is measured against. Kept in a side file (display.json) so that
// renaming never rewrites the metrics.
struct RunDisplay {
  std::string name;     // empty: the config's name
  bool hidden = false;
  std::string fp32Reference;  // "fp32_reference": a run folder's name; empty: the twin rule picks
};
inline constexpr const char* kRunDisplayFileName = "display.json";

struct StoredRun {
  std::filesystem::path folder;
  RunRecord record;       // config.output_dir is the folder it was read from; fp32Reference from display
  StoredRunStatus status = StoredRunStatus::Incomplete;
  RunDisplay display;
  int64_t startedAt = 0;  // Unix time config.json was written (the run's start)
  size_t metricsLinesSkipped = 0;  // metrics.jsonl lines before the last that were not JSON (torn by a crash)
  std::string displayProblem;      // why display.json was ignored ("" when read or absent)
};

// A folder with config.json and metrics.jsonl or summary.json (of whatever
// type: one that is not a regular file is listed, and reads as unreadable).
bool isRunFolder(const std::filesystem::path& dir);

// The run folders in dir: dir itself when it is one, the runs of a sweep
// folder (dir/runs/*), and the runs and sweeps one level below (a
// workspace). Sorted by start time, then path.
std::vector<std::filesystem::path> findRunFolders(const std::filesystem::path& dir);

// Every file goes through readJsonFile / forEachLine (util/json_file.h):
// regular files only, size-capped, UTF-8, nesting-capped. Throws
// ConfigError or IoError naming the file and the reason when config.json
// is missing or bad, when any file is refused by those limits, or when a
// metrics record is JSON but not a valid step. Metrics lines that are not
// JSON (torn by a crash) are skipped and counted; a missing or torn
// run_info.json or summary.json leaves defaults (the run reads as
// incomplete); a bad display.json is ignored (displayProblem says why).
StoredRun readRunFolder(const std::filesystem::path& dir);

// The lenient readers of run_info.json and summary.json (what is missing or
// of the wrong type keeps its default), with a data-parallel run's per-rank
// memory (rank_memory, optimizer_state_sharded, world_size).
RunInfo runInfoFromStoredJson(const nlohmann::json& runInfo);
RunResult runResultFromStoredJson(const nlohmann::json& summary);  // status left as Completed
// The rank_memory array of a run_info.json or summary.json document (empty
// when absent or not an array of memory breakdowns).
std::vector<MemoryBreakdown> rankMemoryFromJson(const nlohmann::json& document);

// Defaults when absent or unreadable; problem (when given) is set to why a
// display.json that is there was not read.
RunDisplay readRunDisplay(const std::filesystem::path& runFolder, std::string* problem = nullptr);
void writeRunDisplay(const std::filesystem::path& runFolder, const RunDisplay& display);  // atomic; throws IoError

}  // namespace plab
