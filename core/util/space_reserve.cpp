#include "util/space_reserve.h"

#include <fcntl.h>
#include <unistd.h>

namespace plab {

SpaceReserve::SpaceReserve(std::filesystem::path file, uint64_t bytes) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  // posix_fallocate really takes the blocks (a sparse file would not).
  const bool reserved = ::posix_fallocate(fd, 0, off_t(bytes)) == 0;
  ::close(fd);
  if (reserved) file_ = std::move(file);
  else ::unlink(file.c_str());
}

SpaceReserve& SpaceReserve::operator=(SpaceReserve&& other) noexcept {
  if (this != &other) {
    release();
    file_ = std::move(other.file_);
    other.file_.clear();
  }
  return *this;
}

void SpaceReserve::release() {
  if (file_.empty()) return;
  ::unlink(file_.c_str());
  file_.clear();
}

}  // namespace plab
