#include "run/stored_run_reader.h"

#include "util/json_file.h"

namespace plab::ui {

void readRankMemory(const std::filesystem::path& folder, plab::RunRecord& record) {
  const plab::JsonFile info = plab::readJsonFile(folder / "run_info.json");
  if (info.ok()) {
    const plab::RunInfo read = plab::runInfoFromStoredJson(info.value);
    record.info.rankMemory = read.rankMemory;
    record.info.optimizerStateSharded = read.optimizerStateSharded;
  }
  const plab::JsonFile summary = plab::readJsonFile(folder / "summary.json");
  if (summary.ok()) {
    const plab::RunResult read = plab::runResultFromStoredJson(summary.value);
    record.result.rankMemory = read.rankMemory;
    record.result.worldSize = read.worldSize;
  } else if (!record.info.rankMemory.empty()) {  // still running, or killed: the ranks it started with
    record.result.worldSize = static_cast<int>(record.info.rankMemory.size());
    record.result.rankMemory = record.info.rankMemory;
  }
}

plab::StoredRun readStoredRun(const std::filesystem::path& folder) { return plab::readRunFolder(folder); }

}  // namespace plab::ui
