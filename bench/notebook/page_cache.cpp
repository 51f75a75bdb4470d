#include "notebook/page_cache.h"

#ifdef __linux__
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

#include <vector>

namespace plab::bench {
namespace {

namespace fs = std::filesystem;

template <class Visit>
void forEachFile(const fs::path& dir, Visit visit) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec) && !it->is_symlink(ec)) visit(it->path());
}

}  // namespace

CacheDrop dropFromPageCache(const fs::path& dir) {
  CacheDrop drop;
#ifdef __linux__
  forEachFile(dir, [&](const fs::path& file) {
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return;
    ::fdatasync(fd);  // dirty pages are not dropped
    if (::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0) {
      ++drop.files;
      drop.bytes += ::lseek(fd, 0, SEEK_END);
    }
    ::close(fd);
  });
#else
  (void)dir;
#endif
  return drop;
}

double residentFraction(const fs::path& dir) {
#ifdef __linux__
  const long page = ::sysconf(_SC_PAGESIZE);
  int64_t pages = 0, resident = 0;
  forEachFile(dir, [&](const fs::path& file) {
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return;
    const off_t size = ::lseek(fd, 0, SEEK_END);
    if (size > 0) {
      void* map = ::mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_SHARED, fd, 0);
      if (map != MAP_FAILED) {
        const size_t n = (static_cast<size_t>(size) + static_cast<size_t>(page) - 1) / static_cast<size_t>(page);
        std::vector<unsigned char> in(n);
        if (::mincore(map, static_cast<size_t>(size), in.data()) == 0) {
          pages += static_cast<int64_t>(n);
          for (unsigned char c : in) resident += c & 1;
        }
        ::munmap(map, static_cast<size_t>(size));
      }
    }
    ::close(fd);
  });
  return pages == 0 ? -1 : static_cast<double>(resident) / static_cast<double>(pages);
#else
  (void)dir;
  return -1;
#endif
}

}  // namespace plab::bench
