#include "util/run_folder.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "util/errors.h"

namespace plab {
namespace fs = std::filesystem;

namespace {

void makeFolder(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw IoError("cannot create output folder " + dir.string() + ": " + (ec ? ec.message() : "not a directory"));
}

// What a run or report writes at the top of its folder.
bool writtenByATool(const fs::path& entry) {
  static const char* const kNames[] = {"config.json", "run_info.json", "summary.json", "summary.csv",
                                       "metrics.jsonl", "metrics.csv", "layers.csv", "report.html",
                                       "report.pdf", "charts", "runs", "display.json"};
  const std::string name = entry.filename().string();
  for (const char* n : kNames)
    if (name == n) return true;
  // ".tokens-*.tmp": a token file left by a crash in the moment between its
  // creation and its unlinking (data/token_store.h).
  return name.rfind("checkpoint-", 0) == 0 || name.rfind(".summary-reserve", 0) == 0 ||
         name.rfind(".tokens-", 0) == 0;
}

}  // namespace

RunFolderLock::RunFolderLock(const fs::path& dir, bool overwrite) {
  makeFolder(dir);
  const fs::path lockFile = dir / kRunFolderLockName;
  fd_ = ::open(lockFile.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw IoError("cannot create " + lockFile.string() + ": " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd_);
    fd_ = -1;
    throw ConfigError("output folder " + dir.string() + " is in use by another run");
  }
  try {
    for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
      if (e.path().filename() == kRunFolderLockName) continue;
      if (!overwrite)
        throw ConfigError("output folder " + dir.string() +
                          " is not empty; choose another folder or pass --overwrite to replace its results");
      if (writtenByATool(e.path())) fs::remove_all(e.path());
    }
  } catch (const fs::filesystem_error& e) {
    ::close(fd_);
    throw IoError("cannot clear output folder " + dir.string() + ": " + e.code().message());
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

RunFolderLock::~RunFolderLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

fs::path createUniqueRunFolder(const fs::path& parent, const std::string& base) {
  makeFolder(parent);
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
  const std::string name = base + "-" + stamp;
  for (int i = 1; i < 10000; ++i) {
    const fs::path dir = parent / (i == 1 ? name : name + "-" + std::to_string(i));
    std::error_code ec;
    if (fs::create_directory(dir, ec)) return dir;  // atomic: fails when it exists
    if (ec) throw IoError("cannot create output folder " + dir.string() + ": " + ec.message());
  }
  throw IoError("cannot find a free folder name for " + (parent / name).string());
}

}  // namespace plab
