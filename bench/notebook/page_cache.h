#pragma once
// A cold open without root: the workspace's files are dropped from the
// page cache (written back, then posix_fadvise DONTNEED), so that the app
// reads them from disk again. The libraries (LibTorch, Qt) stay cached: the
// figure is a cold workspace, not a cold machine. Linux; elsewhere nothing
// is dropped and residentFraction says so.
#include <cstdint>
#include <filesystem>

namespace plab::bench {

struct CacheDrop {
  int64_t files = 0;
  int64_t bytes = 0;
};
// Every regular file under dir (not following links).
CacheDrop dropFromPageCache(const std::filesystem::path& dir);

// The fraction (0-1) of the bytes of the regular files under dir that are in
// the page cache now (mincore), to say whether a drop took; -1 when unknown.
double residentFraction(const std::filesystem::path& dir);

}  // namespace plab::bench
