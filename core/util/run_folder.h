#pragma once
// A run's output folder. Results are never overwritten without a word: a
// folder that already holds files is refused unless the caller asks to
// overwrite, and a lock file keeps a second run (another process) out while
// one writes into it.
#include <filesystem>
#include <string>

namespace plab {

// The lock file inside a run folder; it stays there after the run.
inline constexpr const char* kRunFolderLockName = ".precision-lab.lock";

class RunFolderLock {
 public:
  // Creates dir if missing and locks it. Throws ConfigError when dir holds
  // files and !overwrite, or when another run holds the lock; IoError when
  // dir cannot be created. With overwrite, what an earlier run wrote
  // (metrics, summaries, reports, charts, sub-runs, checkpoints) is removed
  // first; files the tool did not write are left alone.
  RunFolderLock(const std::filesystem::path& dir, bool overwrite);
  ~RunFolderLock();
  RunFolderLock(const RunFolderLock&) = delete;
  RunFolderLock& operator=(const RunFolderLock&) = delete;

 private:
  int fd_ = -1;
};

// Creates and returns parent/<base>-<UTC timestamp>, adding -2, -3, ... when
// that exists, so runs started in the same second never share a folder.
// base must already be a safe file name.
std::filesystem::path createUniqueRunFolder(const std::filesystem::path& parent, const std::string& base);

}  // namespace plab
