#include "run/stored_run_reader.h"

#include "util/json_file.h"

namespace plab::ui {

std::vector<plab::MemoryBreakdown> rankMemoryFromJson(const nlohmann::json& document) {
  std::vector<plab::MemoryBreakdown> out;
  if (!document.is_object() || !document.contains("rank_memory") || !document.at("rank_memory").is_array()) return out;
  try {
    for (const nlohmann::json& rank : document.at("rank_memory")) out.push_back(plab::memoryBreakdownFromJson(rank));
  } catch (const std::exception&) {
    out.clear();  // one bad entry: the ranks cannot be told apart, show none
  }
  return out;
}

void readRankMemory(const std::filesystem::path& folder, plab::RunRecord& record) {
  const plab::JsonFile info = plab::readJsonFile(folder / "run_info.json");
  if (info.ok()) {
    record.info.rankMemory = rankMemoryFromJson(info.value);
    if (info.value.contains("optimizer_state_sharded") && info.value.at("optimizer_state_sharded").is_boolean())
      record.info.optimizerStateSharded = info.value.at("optimizer_state_sharded").get<bool>();
  }
  const plab::JsonFile summary = plab::readJsonFile(folder / "summary.json");
  if (summary.ok()) {
    record.result.rankMemory = rankMemoryFromJson(summary.value);
    if (summary.value.contains("world_size") && summary.value.at("world_size").is_number_integer())
      record.result.worldSize = summary.value.at("world_size").get<int>();
  } else if (!record.info.rankMemory.empty()) {  // still running, or killed: the ranks it started with
    record.result.worldSize = static_cast<int>(record.info.rankMemory.size());
    record.result.rankMemory = record.info.rankMemory;
  }
}

plab::StoredRun readStoredRun(const std::filesystem::path& folder) {
  plab::StoredRun run = plab::readRunFolder(folder);
  readRankMemory(folder, run.record);
  return run;
}

}  // namespace plab::ui
