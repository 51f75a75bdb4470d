#pragma once
// SHA-256 (FIPS 180-4) for checking downloaded blobs against the Hub's
// sha256 ETags, without pulling in a crypto library.
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace plab {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, std::size_t size);
  std::string hexDigest();  // finishes the hash; call once

 private:
  void block(const uint8_t* p);
  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  uint64_t totalBytes_ = 0;
};

std::string sha256Hex(const std::string& data);
// Throws HubError if the file cannot be read.
std::string sha256File(const std::filesystem::path& path);

}  // namespace plab
