#include "util/file_digest.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "hub/sha256.h"
#include "util/regular_file.h"

namespace plab {

std::optional<FileDigest> digestRegularFile(const std::filesystem::path& path, std::string& problem) {
  // O_NONBLOCK: a FIFO is refused below instead of waiting for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    problem = std::string("cannot open (") + std::strerror(errno) + ")";
    return std::nullopt;
  }
  struct Close {
    int fd;
    ~Close() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    problem = std::string("cannot stat (") + std::strerror(errno) + ")";
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) {
    problem = notRegularFileReason(st.st_mode);
    return std::nullopt;
  }
  Sha256 hash;
  FileDigest out;
  std::vector<char> buffer(1 << 20);
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      problem = std::string("cannot read (") + std::strerror(errno) + ")";
      return std::nullopt;
    }
    hash.update(buffer.data(), static_cast<size_t>(n));
    out.bytes += static_cast<std::uint64_t>(n);
  }
  out.sha256 = hash.hexDigest();
  return out;
}

nlohmann::json toJson(const FileDigest& d) { return {{"bytes", d.bytes}, {"sha256", d.sha256}}; }

std::string describe(const FileDigest& d) {
  return std::to_string(d.bytes) + " bytes, sha256 " + d.sha256.substr(0, 16) + "...";
}

bool isSha256Hex(const std::string& text) {
  return text.size() == 64 && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace plab
