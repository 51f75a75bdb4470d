#include "util/record_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/errors.h"

namespace plab {

void RecordFile::open(const std::filesystem::path& file) {
  if (fd_ >= 0) ::close(fd_);
  file_ = file;
  fd_ = ::open(file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw IoError("cannot open " + file.string() + " for writing: " + std::strerror(errno));
}

RecordFile::~RecordFile() {
  if (fd_ >= 0) ::close(fd_);
}

off_t RecordFile::size() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) throw IoError("cannot read the size of " + file_.string() + ": " + std::strerror(errno));
  return st.st_size;
}

void RecordFile::truncateTo(off_t size) {
  if (::ftruncate(fd_, size) != 0)
    throw IoError("cannot truncate " + file_.string() + " back to its last complete record: " + std::strerror(errno));
}

void RecordFile::append(const std::string& record) {
  const off_t start = size();
  const char* p = record.data();
  size_t left = record.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int reason = n < 0 ? errno : ENOSPC;
      std::string message = "cannot write " + file_.string() + ": " + std::strerror(reason);
      if (::ftruncate(fd_, start) != 0)
        message += " (and truncating back to its last complete record failed: " + std::string(std::strerror(errno)) + ")";
      lastError_ = reason;
      throw IoError(message);
    }
    p += n;
    left -= size_t(n);
  }
}

}  // namespace plab
