#pragma once
// plab::readRunFolder for the app, which reads a data-parallel run's
// per-rank memory too (run_info.json's rank_memory and
// optimizer_state_sharded, summary.json's world_size and rank_memory: core
// reads them now). Used for following a ProcessRun's folder.
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

using plab::rankMemoryFromJson;

}  // namespace plab::ui
