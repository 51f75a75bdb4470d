#include "util/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace plab {
namespace {

struct FileDescriptor {
  int fd;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

const char* notRegularFileReason(unsigned mode) {
  if (S_ISDIR(mode)) return "is a directory, not a file";
  if (S_ISFIFO(mode)) return "is a FIFO (named pipe), not a regular file";
  if (S_ISSOCK(mode)) return "is a socket, not a regular file";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "is a device, not a regular file";
  return "is not a regular file";
}

std::string fileSizeText(std::uint64_t bytes) {
  if (bytes >= (1ull << 20)) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (1ull << 10)) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

std::optional<std::string> readRegularFile(const std::filesystem::path& path, std::string& problem,
                                           std::uint64_t maxBytes) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused
  // below with every other non-regular file (the flag does nothing to
  // reads of a regular file).
  const FileDescriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (file.fd < 0) {
    problem = std::string("cannot open (") + std::strerror(errno) + ")";
    return std::nullopt;
  }
  struct stat st {};
  if (::fstat(file.fd, &st) != 0) {
    problem = std::string("cannot stat (") + std::strerror(errno) + ")";
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) {
    problem = notRegularFileReason(st.st_mode);
    return std::nullopt;
  }
  const auto tooBig = [&](std::uint64_t size) {
    problem = "is " + fileSizeText(size) + ", over the " + fileSizeText(maxBytes) + " limit for this file";
  };
  if (static_cast<std::uint64_t>(st.st_size) > maxBytes) {
    tooBig(static_cast<std::uint64_t>(st.st_size));
    return std::nullopt;
  }
  std::string bytes;
  bytes.reserve(static_cast<std::size_t>(st.st_size));
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(file.fd, buffer, sizeof buffer);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      problem = std::string("cannot read (") + std::strerror(errno) + ")";
      return std::nullopt;
    }
    bytes.append(buffer, static_cast<std::size_t>(n));
    if (bytes.size() > maxBytes) {  // grew since it was opened
      tooBig(bytes.size());
      return std::nullopt;
    }
  }
  return bytes;
}

}  // namespace plab
