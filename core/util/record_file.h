#pragma once
// An append-only file of whole records. Each record goes down in one write()
// (looped only on a short write); a write that fails (disk full, quota)
// truncates the file back to where the record began, so the file always ends
// at its last complete record, never at a torn fragment that the next record
// would be glued to.
#include <sys/types.h>

#include <filesystem>
#include <string>

namespace plab {

class RecordFile {
 public:
  RecordFile() = default;
  void open(const std::filesystem::path& file);  // for append, created if missing; throws IoError
  ~RecordFile();
  RecordFile(const RecordFile&) = delete;
  RecordFile& operator=(const RecordFile&) = delete;

  off_t size() const;                       // where the next record begins
  // Appends record whole or not at all; throws IoError naming the file and
  // the system's reason, kept in lastError() (ENOSPC: disk full).
  void append(const std::string& record);
  int lastError() const { return lastError_; }
  // Undoes appends after a failure elsewhere (keeps files in step); throws IoError.
  void truncateTo(off_t size);
  const std::filesystem::path& path() const { return file_; }

 private:
  std::filesystem::path file_;
  int fd_ = -1;
  int lastError_ = 0;
};

}  // namespace plab
