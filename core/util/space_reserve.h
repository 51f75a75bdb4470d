#pragma once
// Disk space set aside at the start of a run so that the final summary can
// still be written when the disk fills up mid-run: release() frees it just
// before the summary is written.
#include <cstdint>
#include <filesystem>

namespace plab {

class SpaceReserve {
 public:
  SpaceReserve() = default;
  // Allocates bytes in file (a hidden name in the run folder). Best effort:
  // a reserve that cannot be made leaves the run as it was.
  SpaceReserve(std::filesystem::path file, uint64_t bytes);
  ~SpaceReserve() { release(); }
  SpaceReserve(const SpaceReserve&) = delete;
  SpaceReserve& operator=(const SpaceReserve&) = delete;
  SpaceReserve& operator=(SpaceReserve&& other) noexcept;

  void release();  // removes the file; safe to call twice

 private:
  std::filesystem::path file_;
};

}  // namespace plab
