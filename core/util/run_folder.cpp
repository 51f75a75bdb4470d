#include "util/run_folder.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <optional>

#include <nlohmann/json.hpp>

#include "util/atomic_file.h"
#include "util/errors.h"
#include "util/json_limits.h"
#include "util/tool_files.h"

namespace plab {
namespace fs = std::filesystem;

namespace {

void makeFolder(const fs::path& dir) {
  std::error_code ec;
  // A file (or FIFO, device...) where the folder should be is the caller's
  // mistake (a config or usage error), not a failing disk.
  if (const auto st = fs::status(dir, ec); !ec && fs::exists(st) && !fs::is_directory(st))
    throw ConfigError("output folder " + dir.string() + " is a file, not a folder; choose a folder");
  ec.clear();
  fs::create_directories(dir, ec);
  if (ec == std::errc::not_a_directory)
    throw ConfigError("output folder " + dir.string() + " lies under a file, not a folder; choose a folder");
  if (ec || !fs::is_directory(dir))
    throw IoError("cannot create output folder " + dir.string() + ": " + (ec ? ec.message() : "not a directory"));
}

std::string utcStamp(const char* format) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), format, &tm);
  return stamp;
}

// A small regular file's JSON, never following a link, never blocking on a
// FIFO, never reading more than maxBytes; null when it is anything else.
nlohmann::json readSmallJson(const fs::path& file, size_t maxBytes) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return nullptr;
  struct stat st {};
  std::string text;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && size_t(st.st_size) <= maxBytes) {
    text.resize(size_t(st.st_size));
    size_t got = 0;
    while (got < text.size()) {
      const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += size_t(n);
    }
    text.resize(got);
  }
  ::close(fd);
  if (text.empty() || !jsonNestingProblem(text).empty()) return nullptr;
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? nlohmann::json(nullptr) : j;
}

bool isRealFolder(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(fs::symlink_status(p, ec)) && !ec;
}

bool hasMarker(const fs::path& dir) {
  const nlohmann::json j = readSmallJson(dir / kRunFolderMarkerName, 64 * 1024);
  return j.is_object() && j.value("tool", "") == "Precision Lab";
}

// A run folder from before the marker: its run_info.json is a run's.
bool hasRunInfoOfATool(const fs::path& dir) {
  const nlohmann::json j = readSmallJson(dir / "run_info.json", 64u << 20);
  return j.is_object() && j.contains("run_name") && j.contains("optimizer_mode") && j.contains("parameter_count");
}

bool isSweepOfOldRuns(const fs::path& dir) {
  const fs::path runs = dir / "runs";
  if (!isRealFolder(runs)) return false;
  int count = 0;
  std::error_code ec;
  for (fs::directory_iterator it(runs, ec), end; !ec && it != end; it.increment(ec)) {
    if (!isRealFolder(it->path()) || !(hasMarker(it->path()) || hasRunInfoOfATool(it->path()))) return false;
    ++count;
  }
  return !ec && count > 0;
}

// Whether path is folder or inside it, once both are resolved.
bool isInside(const fs::path& path, const fs::path& folder) {
  std::error_code ec1, ec2;
  fs::path p = fs::weakly_canonical(path, ec1), f = fs::weakly_canonical(folder, ec2);
  if (ec1 || ec2) return false;
  if (f.filename().empty()) f = f.parent_path();  // "run/"
  return std::mismatch(f.begin(), f.end(), p.begin(), p.end()).first == f.end();
}

}  // namespace

RunFolderLock::RunFolderLock(const fs::path& dir, bool overwrite, const fs::path& keep) {
  makeFolder(dir);
  const fs::path lockFile = dir / kRunFolderLockName;
  // O_NOFOLLOW: a link planted at the lock's name never creates a file elsewhere.
  bool createdLock = true;
  fd_ = ::open(lockFile.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd_ < 0 && errno == EEXIST) {
    createdLock = false;
    fd_ = ::open(lockFile.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  }
  if (fd_ < 0) throw IoError("cannot create " + lockFile.string() + ": " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd_);
    fd_ = -1;
    throw ConfigError("output folder " + dir.string() + " is in use by another run");
  }
  try {
    bool empty = true;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const fs::path name = it->path().filename();
      if (name != kRunFolderLockName && name != kRunFolderMarkerName) empty = false;
    }
    if (ec) throw IoError("cannot list output folder " + dir.string() + ": " + ec.message());
    if (!empty) {
      if (!overwrite)
        throw ConfigError("output folder " + dir.string() +
                          " is not empty; choose another folder or pass --overwrite to replace its results");
      if (const std::string problem = runFolderOriginProblem(dir); !problem.empty())
        throw ConfigError("--overwrite refused: output folder " + dir.string() + " " + problem +
                          "; nothing in it was removed. Choose another folder, or empty it yourself");
      if (!keep.empty() && isInside(keep, dir))
        throw ConfigError("--overwrite refused: output folder " + dir.string() + " holds " + keep.string() +
                          ", which this run reads; nothing in it was removed. Choose another folder");
      removeToolFiles(dir);
    }
    if (!hasMarker(dir)) markRunFolder(dir);
  } catch (...) {
    // A refused folder keeps no trace of the attempt.
    if (createdLock) ::unlink(lockFile.c_str());
    ::close(fd_);
    fd_ = -1;
    throw;
  }
}

RunFolderLock::~RunFolderLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

fs::path createUniqueRunFolder(const fs::path& parent, const std::string& base) {
  makeFolder(parent);
  const std::string name = base + "-" + utcStamp("%Y%m%d-%H%M%S");
  for (int i = 1; i < 10000; ++i) {
    const fs::path dir = parent / (i == 1 ? name : name + "-" + std::to_string(i));
    std::error_code ec;
    if (fs::create_directory(dir, ec)) {  // atomic: fails when it exists
      markRunFolder(dir);
      return dir;
    }
    if (ec) throw IoError("cannot create output folder " + dir.string() + ": " + ec.message());
  }
  throw IoError("cannot find a free folder name for " + (parent / name).string());
}

void markRunFolder(const fs::path& dir) {
  writeJsonFileAtomically(
      dir / kRunFolderMarkerName,
      {{"tool", "Precision Lab"},
       {"version", PLAB_VERSION},
       {"created", utcStamp("%Y-%m-%dT%H:%M:%SZ")},
       {"note", "Precision Lab wrote this folder. --overwrite and Delete remove only the files it writes here "
                "(never following links) and keep every other file."},
       {"writes", {"config.json", "run_info.json", "summary.json", "summary.csv", "metrics.jsonl", "metrics.csv",
                   "layers.csv", "report.html", "report.pdf", "display.json", "index.json", "index.columns",
                   "charts/*.svg", "charts/*.png",
                   "checkpoint-<step>/", "runs/<run>/", ".precision-lab.lock", ".summary-reserve", "temporaries"}}});
}

std::string runFolderOriginProblem(const fs::path& folder) {
  const fs::path dir = folder.filename().empty() ? folder.parent_path() : folder;  // "run/" is "run"
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(dir, ec);
  if (ec || !fs::exists(st)) return "does not exist";
  if (fs::is_symlink(st)) return "is a symbolic link; a linked folder is never cleared through its link";
  if (!fs::is_directory(st)) return "is not a folder";
  if (hasMarker(dir)) return {};
  // runs/<run>/ of a sweep the tool wrote.
  const fs::path parent = dir.parent_path();
  if (parent.filename() == "runs" && isRealFolder(parent) && runFolderOriginProblem(parent.parent_path()).empty())
    return {};
  if (hasRunInfoOfATool(dir) || isSweepOfOldRuns(dir)) return {};
  return std::string("was not made by Precision Lab: it has no ") + kRunFolderMarkerName +
         " marker and no run_info.json of a Precision Lab run";
}

std::vector<fs::path> deleteRunFolder(const fs::path& dir) {
  if (const std::string problem = runFolderOriginProblem(dir); !problem.empty())
    throw ConfigError("not deleted: " + dir.string() + " " + problem);
  // A CLI run writing into it holds its lock.
  const fs::path lockFile = dir / kRunFolderLockName;
  const int fd = ::open(lockFile.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    throw ConfigError("not deleted: " + dir.string() + " is in use by a run");
  }
  std::vector<fs::path> kept;
  try {
    kept = removeToolFiles(dir);
  } catch (...) {
    if (fd >= 0) ::close(fd);
    throw;
  }
  for (const char* name : {kRunFolderMarkerName, kRunFolderLockName}) {
    const fs::path file = dir / name;
    if (::unlink(file.c_str()) != 0 && errno != ENOENT) {
      if (fd >= 0) ::close(fd);
      throw IoError("cannot remove " + file.string() + ": " + std::strerror(errno));
    }
  }
  if (fd >= 0) ::close(fd);
  if (kept.empty() && ::rmdir(dir.c_str()) != 0 && errno != ENOENT)
    throw IoError("cannot remove " + dir.string() + ": " + std::strerror(errno));
  return kept;
}

int removeLeftoversOfKilledRuns(const fs::path& dir) {
  if (!runFolderOriginProblem(dir).empty()) return 0;
  return removeStaleTemporaries(dir);
}

}  // namespace plab
