#pragma once
// Disk space set aside at the start of a run so that the final files can
// still be written when the disk fills up mid-run. It is a requirement, not
// a hope: a reserve that cannot be made refuses the run (IoError naming the
// folder and its free space). take() hands part of it back for a file
// written during the run (run_info.json); release() frees the rest just
// before summary.json and the report are written.
#include <cstdint>
#include <filesystem>

namespace plab {

class SpaceReserve {
 public:
  SpaceReserve() = default;
  // Allocates bytes in file (a hidden name in the run folder); throws IoError
  // "not enough free space in <folder>: ..." when they cannot be allocated.
  SpaceReserve(std::filesystem::path file, uint64_t bytes);
  ~SpaceReserve() { release(); }
  SpaceReserve(const SpaceReserve&) = delete;
  SpaceReserve& operator=(const SpaceReserve&) = delete;
  SpaceReserve& operator=(SpaceReserve&& other) noexcept;

  void take(uint64_t bytes);  // frees bytes of the reserve (all of it if fewer are left)
  void release();             // removes the file; safe to call twice
  uint64_t bytes() const { return bytes_; }

 private:
  std::filesystem::path file_;
  uint64_t bytes_ = 0;
};

// Free bytes for an unprivileged writer on the file system holding path.
uint64_t freeSpaceBytes(const std::filesystem::path& path);

}  // namespace plab
