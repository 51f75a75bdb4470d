#pragma once
// plab::readRunFolder plus what it leaves out that the app shows: the
// per-rank memory of a data-parallel run (run_info.json's rank_memory and
// optimizer_state_sharded, summary.json's world_size and rank_memory).
// Used for workspace runs and for following a ProcessRun's folder.
#include <filesystem>
#include <vector>

#include "report/run_folder_reader.h"

namespace plab::ui {

// Throws like plab::readRunFolder.
plab::StoredRun readStoredRun(const std::filesystem::path& folder);

// Fills record.info.rankMemory / optimizerStateSharded and
// record.result.worldSize / rankMemory from the folder's side files; what
// is missing or malformed leaves the record as it was.
void readRankMemory(const std::filesystem::path& folder, plab::RunRecord& record);

// The rank_memory array of a run_info.json or summary.json document (empty
// when absent or not an array of memory breakdowns).
std::vector<plab::MemoryBreakdown> rankMemoryFromJson(const nlohmann::json& document);

}  // namespace plab::ui
