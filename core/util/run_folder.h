#pragma once
// A run's output folder. Results are never overwritten without a word: a
// folder that already holds files is refused unless the caller asks to
// overwrite, and a lock file keeps a second run (another process) out while
// one writes into it.
#include <filesystem>
#include <string>
#include <vector>

namespace plab {

// The lock file inside a run folder; it stays there after the run.
inline constexpr const char* kRunFolderLockName = ".precision-lab.lock";

// The marker the tool writes into every run folder it creates (a JSON object
// naming the tool, its version, the time and what it writes there). Only a
// folder with it is ever cleared (--overwrite) or deleted (the app's Delete),
// and then only of the files the tool writes (util/tool_files.h).
inline constexpr const char* kRunFolderMarkerName = ".precision-lab-run";

class RunFolderLock {
 public:
  // Creates dir if missing, locks it and marks it as the tool's. Throws
  // ConfigError when dir holds files and !overwrite, when it holds files and
  // is not the tool's (runFolderOriginProblem), or when another run holds the
  // lock; IoError when dir cannot be created. With overwrite, what an earlier
  // run wrote (metrics, summaries, reports, charts, sub-runs, checkpoints) is
  // removed first; files the tool did not write are left alone.
  // With overwrite and a non-empty keep inside dir (the checkpoint a resumed
  // run reads), ConfigError too: clearing dir would remove it.
  RunFolderLock(const std::filesystem::path& dir, bool overwrite, const std::filesystem::path& keep = {});
  ~RunFolderLock();
  RunFolderLock(const RunFolderLock&) = delete;
  RunFolderLock& operator=(const RunFolderLock&) = delete;

 private:
  int fd_ = -1;
};

// Creates, marks and returns parent/<base>-<UTC timestamp>, adding -2, -3,
// ... when that exists, so runs started in the same second never share a
// folder. base must already be a safe file name.
std::filesystem::path createUniqueRunFolder(const std::filesystem::path& parent, const std::string& base);

// Writes the marker into dir.
void markRunFolder(const std::filesystem::path& dir);

// "" when dir is a run folder the tool wrote: a real folder (not a link)
// holding the marker, or a sub-run runs/<run>/ of one. Folders from before
// the marker count when their run_info.json is a Precision Lab run's (a
// regular file whose JSON object has run_name, optimizer_mode and
// parameter_count), or, for a sweep, when every runs/<run>/ is one. Else a
// sentence saying why not, to follow the folder's name.
std::string runFolderOriginProblem(const std::filesystem::path& dir);

// Deletes a run folder the tool wrote: removes its files (never following a
// link), then the folder when nothing else is left in it. Throws ConfigError
// naming the folder when it is not the tool's or a run holds its lock;
// IoError when a file cannot be removed. Returns what was kept (files of
// someone else's), relative to dir.
std::vector<std::filesystem::path> deleteRunFolder(const std::filesystem::path& dir);

// After a kill: removes the temporaries the dead run left (a half-written
// model.safetensors.tmp.<pid> in a checkpoint, ...) from a run folder of the
// tool's (nothing when dir is not one). Returns how many.
int removeLeftoversOfKilledRuns(const std::filesystem::path& dir);

}  // namespace plab
