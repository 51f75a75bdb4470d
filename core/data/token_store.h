#pragma once
// A data set's token ids, compact: 2 bytes per id when the vocabulary has at
// most 65536 ids, else 4. Filled while the data set is tokenized, then read
// only. Kept either
// - in memory, in chunks of 1 Mi ids (never reallocated: no doubling peak), or
// - in a file in a folder the caller owns: created as
//   ".tokens-<pid>-<n>.tmp", unlinked at once (nothing stays behind, even
//   after a crash or SIGKILL), written through a small buffer and
//   memory-mapped read-only by finish(). Its pages are file-backed: the kernel
//   can drop them under memory pressure and read them back. If the file
//   cannot be created, written (a full disk) or mapped, the ids move to
//   memory and the store goes on there (mapped() tells).
// The file starts with a 32-byte header: "PLABTOKS", version 1 (uint32),
// bytes per id (uint32), the number of ids (uint64), 8 reserved bytes; then
// the ids, little-endian as the machine.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace plab {

class TokenStore {
 public:
  // An empty folder keeps the ids in memory.
  explicit TokenStore(int64_t vocabSize, const std::filesystem::path& folder = {});
  ~TokenStore();
  TokenStore(const TokenStore&) = delete;
  TokenStore& operator=(const TokenStore&) = delete;

  // Throws DataError for an id outside [0, 2^(8 * bytesPerToken())).
  void append(const std::vector<int64_t>& ids);
  // No more ids: maps the file.
  void finish();

  int64_t size() const { return count_; }
  int bytesPerToken() const { return width_; }
  bool mapped() const { return map_ != nullptr; }
  int64_t lastId() const { return lastId_; }  // -1 when empty
  // Copies ids [start, start + n) into out as int64.
  void read(int64_t start, int64_t n, int64_t* out) const;

 private:
  static constexpr int64_t kChunkIds = int64_t(1) << 20;
  static constexpr std::size_t kHeaderBytes = 32;

  void appendToMemory(uint32_t id);
  bool writeToFile(const unsigned char* data, std::size_t bytes, std::size_t offset);
  void flushBuffer();
  void moveFileToMemory();
  void closeFile();
  uint32_t at(int64_t i) const;

  int width_;
  int64_t count_ = 0;
  int64_t lastId_ = -1;
  bool finished_ = false;
  std::vector<std::vector<unsigned char>> chunks_;  // memory: kChunkIds ids each (the last one partly filled)
  int fd_ = -1;                                     // file: open until finish()
  int64_t fileIds_ = 0;                             // ids written to the file
  std::vector<unsigned char> buffer_;               // file: ids not yet written
  void* map_ = nullptr;
  std::size_t mapBytes_ = 0;
  const unsigned char* ids_ = nullptr;  // mapped ids
};

}  // namespace plab
