#include "data/token_store.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include "util/errors.h"

namespace plab {

namespace {

constexpr std::size_t kBufferBytes = std::size_t(1) << 20;
constexpr char kMagic[8] = {'P', 'L', 'A', 'B', 'T', 'O', 'K', 'S'};

std::atomic<int> fileCounter{0};

std::vector<unsigned char> fileHeader(int width, int64_t count) {
  std::vector<unsigned char> h(32, 0);
  const uint32_t version = 1, bytes = static_cast<uint32_t>(width);
  const uint64_t n = static_cast<uint64_t>(count);
  std::memcpy(h.data(), kMagic, 8);
  std::memcpy(h.data() + 8, &version, 4);
  std::memcpy(h.data() + 12, &bytes, 4);
  std::memcpy(h.data() + 16, &n, 8);
  return h;
}

}  // namespace

TokenStore::TokenStore(int64_t vocabSize, const std::filesystem::path& folder)
    : width_(vocabSize <= 65536 ? 2 : 4) {
  if (folder.empty()) return;
  const std::filesystem::path file =
      folder / (".tokens-" + std::to_string(::getpid()) + "-" + std::to_string(fileCounter++) + ".tmp");
  fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd_ < 0) return;  // no file: the ids stay in memory
  ::unlink(file.c_str());  // the descriptor (and later the mapping) keeps the data
  const std::vector<unsigned char> h = fileHeader(width_, 0);
  if (!writeToFile(h.data(), h.size(), 0)) {
    closeFile();
    return;
  }
  buffer_.reserve(kBufferBytes);
}

TokenStore::~TokenStore() {
  if (map_) ::munmap(map_, mapBytes_);
  closeFile();
}

void TokenStore::closeFile() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool TokenStore::writeToFile(const unsigned char* data, std::size_t bytes, std::size_t offset) {
  while (bytes > 0) {
    const ssize_t n = ::pwrite(fd_, data, bytes, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    bytes -= static_cast<std::size_t>(n);
    offset += static_cast<std::size_t>(n);
  }
  return true;
}

void TokenStore::append(const std::vector<int64_t>& ids) {
  if (finished_) throw DataError("token store: ids appended after finish()");
  const int64_t limit = int64_t(1) << (8 * width_);
  for (const int64_t id : ids) {
    if (id < 0 || id >= limit)
      throw DataError("token id " + std::to_string(id) + " does not fit the token store (" + std::to_string(width_) +
                      " bytes per id)");
    const uint32_t v = static_cast<uint32_t>(id);
    lastId_ = id;
    if (fd_ < 0) {
      appendToMemory(v);
      continue;
    }
    unsigned char bytes[4];
    std::memcpy(bytes, &v, 4);  // little-endian: the low bytes first
    buffer_.insert(buffer_.end(), bytes, bytes + width_);
    ++count_;
    if (buffer_.size() >= kBufferBytes) flushBuffer();
  }
}

void TokenStore::appendToMemory(uint32_t id) {
  if (count_ % kChunkIds == 0) {
    chunks_.emplace_back();
    chunks_.back().reserve(static_cast<std::size_t>(kChunkIds * width_));
  }
  unsigned char bytes[4];
  std::memcpy(bytes, &id, 4);
  chunks_.back().insert(chunks_.back().end(), bytes, bytes + width_);
  ++count_;
}

void TokenStore::flushBuffer() {
  if (fd_ < 0 || buffer_.empty()) return;
  if (!writeToFile(buffer_.data(), buffer_.size(), kHeaderBytes + static_cast<std::size_t>(fileIds_ * width_)))
    return moveFileToMemory();
  fileIds_ += static_cast<int64_t>(buffer_.size()) / width_;
  buffer_.clear();
}

// A file that cannot be written or mapped: its ids and the buffered ones go
// to memory chunks, and the file is closed (its space is freed).
void TokenStore::moveFileToMemory() {
  std::vector<unsigned char> pending;
  pending.swap(buffer_);
  const int64_t inFile = fileIds_;
  count_ = 0;
  std::vector<unsigned char> block(kBufferBytes);
  for (int64_t done = 0; done < inFile;) {
    const std::size_t want = static_cast<std::size_t>(std::min<int64_t>(inFile - done, int64_t(kBufferBytes) / width_)) *
                             static_cast<std::size_t>(width_);
    const ssize_t n =
        ::pread(fd_, block.data(), want, static_cast<off_t>(kHeaderBytes + static_cast<std::size_t>(done * width_)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || n % width_ != 0)
      throw IoError(std::string("cannot read back the token file: ") + (n < 0 ? std::strerror(errno) : "short read"));
    for (ssize_t k = 0; k < n; k += width_) {
      uint32_t v = 0;
      std::memcpy(&v, block.data() + k, static_cast<std::size_t>(width_));
      appendToMemory(v);
    }
    done += n / width_;
  }
  for (std::size_t k = 0; k < pending.size(); k += static_cast<std::size_t>(width_)) {
    uint32_t v = 0;
    std::memcpy(&v, pending.data() + k, static_cast<std::size_t>(width_));
    appendToMemory(v);
  }
  fileIds_ = 0;
  closeFile();
}

void TokenStore::finish() {
  if (finished_) return;
  finished_ = true;
  if (fd_ < 0) return;
  flushBuffer();
  if (fd_ < 0) return;
  const std::vector<unsigned char> h = fileHeader(width_, count_);
  if (!writeToFile(h.data(), h.size(), 0)) return moveFileToMemory();
  const std::size_t bytes = kHeaderBytes + static_cast<std::size_t>(count_ * width_);
  void* map = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd_, 0);
  if (map == MAP_FAILED) return moveFileToMemory();
  if (std::memcmp(map, h.data(), h.size()) != 0) {
    ::munmap(map, bytes);
    throw IoError("the token file reads back a different header than was written");
  }
  map_ = map;
  mapBytes_ = bytes;
  ids_ = static_cast<const unsigned char*>(map) + kHeaderBytes;
  closeFile();  // the mapping keeps the data
}

uint32_t TokenStore::at(int64_t i) const {
  const unsigned char* p;
  if (ids_)
    p = ids_ + i * width_;
  else if (fd_ < 0)
    p = chunks_[static_cast<std::size_t>(i / kChunkIds)].data() + (i % kChunkIds) * width_;
  else if (i >= fileIds_)
    p = buffer_.data() + (i - fileIds_) * width_;
  else
    throw DataError("token store: ids in the file are read after finish()");
  uint32_t v = 0;
  std::memcpy(&v, p, static_cast<std::size_t>(width_));
  return v;
}

void TokenStore::read(int64_t start, int64_t n, int64_t* out) const {
  if (start < 0 || n < 0 || start + n > count_)
    throw DataError("token store: ids " + std::to_string(start) + ".." + std::to_string(start + n) + " of " +
                    std::to_string(count_));
  for (int64_t k = 0; k < n; ++k) out[k] = at(start + k);
}

}  // namespace plab
