#pragma once
// A run folder's index (index.json): what listing a run needs — its config,
// run_info without the module tree, summary, status, start time and every
// step's scalar figures (report/scalar_steps.h) — in one small file, so that
// a workspace of a thousand runs opens without reading a thousand
// metrics.jsonl files. The index is derived from the folder's own files and
// trusted only while they are unchanged: it records the size and
// modification time of config.json, run_info.json, summary.json and
// metrics.jsonl, and any difference sends the reader to the files
// themselves. Written when a run's report is written (run_report.h) and by
// the app for runs of its workspace that lack one; never for a folder the
// tool does not own. Torch-free.
#include <filesystem>
#include <optional>

#include "report/run_folder_reader.h"

namespace plab::report {

inline constexpr const char* kRunIndexFileName = "index.json";
// The steps' dense columns beside it (report/scalar_steps.h: raw bytes),
// named in index.json with their size and FNV-1a digest: an index is used
// only with the columns it was written with.
inline constexpr const char* kRunIndexColumnsFileName = "index.columns";
// An index of another version is not read: the folder is read in full and,
// when the workspace owns it, indexed again in this version (readRunForListing).
// 2: info carries run_info.json's started_at (report/run_order.h).
// 3: the steps' dense columns in index.columns (scalar_steps.h), the JSON
//    without indentation (listing parsed a JSON number per figure).
inline constexpr int kRunIndexVersion = 3;

// How a listed run was read: its steps are scalar (from the index, or the
// folder read in full and then reduced) — a view that needs per-layer
// records reads the folder again (readRunFolder).
struct ListedRun {
  StoredRun run;              // record.steps hold scalar steps only
  bool fromIndex = false;     // index.json was current and used
};

// The index of `run` (as readRunFolder returned it for `dir`), written
// atomically as dir/index.json with the stamp of the files it was read
// from. Throws IoError.
void writeRunIndex(const std::filesystem::path& dir, const StoredRun& run);
// Reads dir in full and writes its index; for a folder the tool just
// finished. Throws like readRunFolder and writeRunIndex.
void indexRunFolder(const std::filesystem::path& dir);

// The run from dir/index.json (display.json read as readRunFolder does),
// or nothing when there is none, it is stale (the files changed since),
// refused by the JSON limits, or not an index this version wrote.
std::optional<StoredRun> readRunIndex(const std::filesystem::path& dir);

// For listing: readRunIndex, else readRunFolder reduced to scalar steps —
// and, when writeMissingIndex and the run has ended (summary.json), its
// index written for next time (a failure to write it is not an error).
// Throws like readRunFolder.
ListedRun readRunForListing(const std::filesystem::path& dir, bool writeMissingIndex);

}  // namespace plab::report
