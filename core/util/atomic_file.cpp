#include "util/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "util/errors.h"

namespace plab {
namespace fs = std::filesystem;

namespace {

// Unique per process and call, so concurrent writers never share a temporary.
fs::path temporaryNameFor(const fs::path& file) {
  static std::atomic<unsigned> counter{0};
  return file.parent_path() / ("." + file.filename().string() + ".tmp-" + std::to_string(::getpid()) + "-" +
                               std::to_string(counter++));
}

bool writeAll(int fd, const std::string& content) {
  const char* p = content.data();
  size_t left = content.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    left -= size_t(n);
  }
  return true;
}

}  // namespace

void writeFileAtomically(const fs::path& file, const std::string& content) {
  const fs::path tmp = temporaryNameFor(file);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError("cannot write " + file.string() + ": " + std::strerror(errno));
  const bool ok = writeAll(fd, content) && ::fsync(fd) == 0;
  const int savedErrno = errno;
  const bool closed = ::close(fd) == 0;
  if (!ok || !closed || std::rename(tmp.c_str(), file.c_str()) != 0) {
    const int reason = !ok ? savedErrno : errno;
    ::unlink(tmp.c_str());
    throw IoError("cannot write " + file.string() + ": " + std::strerror(reason));
  }
}

std::string dumpJsonForFile(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

void writeJsonFileAtomically(const fs::path& file, const nlohmann::json& j) {
  writeFileAtomically(file, dumpJsonForFile(j));
}

}  // namespace plab
