#include "util/space_reserve.h"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "util/errors.h"

namespace plab {
namespace {

std::string kib(uint64_t bytes) { return std::to_string((bytes + 1023) / 1024) + " KiB"; }

}  // namespace

uint64_t freeSpaceBytes(const std::filesystem::path& path) {
  struct statvfs st {};
  if (::statvfs(path.c_str(), &st) != 0) return 0;
  return uint64_t(st.f_bavail) * uint64_t(st.f_frsize);
}

SpaceReserve::SpaceReserve(std::filesystem::path file, uint64_t bytes) {
  const std::filesystem::path folder = file.parent_path();
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  // posix_fallocate really takes the blocks (a sparse file would not).
  const int error = fd < 0 ? errno : ::posix_fallocate(fd, 0, off_t(bytes));
  if (fd >= 0) ::close(fd);
  if (error != 0) {
    if (fd >= 0) ::unlink(file.c_str());
    const uint64_t free = freeSpaceBytes(folder);  // after the failed reserve is given back
    throw IoError("not enough free space in " + folder.string() + ": " + kib(free) + " free, and a run needs " +
                  kib(bytes) + " set aside before it starts for its final files (summary.json, run_info.json, " +
                  "the report) plus room for its metrics (" + std::strerror(error) + ")");
  }
  file_ = std::move(file);
  bytes_ = bytes;
}

SpaceReserve& SpaceReserve::operator=(SpaceReserve&& other) noexcept {
  if (this != &other) {
    release();
    file_ = std::move(other.file_);
    bytes_ = other.bytes_;
    other.file_.clear();
    other.bytes_ = 0;
  }
  return *this;
}

void SpaceReserve::take(uint64_t bytes) {
  if (file_.empty()) return;
  if (bytes >= bytes_) return release();
  // Shrinking the file frees its blocks past the new end.
  if (::truncate(file_.c_str(), off_t(bytes_ - bytes)) == 0) bytes_ -= bytes;
  else release();
}

void SpaceReserve::release() {
  if (file_.empty()) return;
  ::unlink(file_.c_str());
  file_.clear();
  bytes_ = 0;
}

}  // namespace plab
