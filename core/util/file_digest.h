#pragma once
// The size and sha256 of a regular file, read in bounded chunks (any size:
// checkpoints hold gigabytes). A FIFO, device or folder in its place is
// refused without blocking, as every reader of the tool does.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace plab {

struct FileDigest {
  std::uint64_t bytes = 0;
  std::string sha256;  // 64 lowercase hex digits
};

// nullopt with `problem` set to why not ("is a FIFO (named pipe), not a
// regular file", "cannot open (...)"), to be put after the file's name.
std::optional<FileDigest> digestRegularFile(const std::filesystem::path& path, std::string& problem);

// {"bytes": N, "sha256": "..."}, as checkpoints record it.
nlohmann::json toJson(const FileDigest& d);

// "12345 bytes, sha256 0123abcd..." (the digest cut to 16 digits).
std::string describe(const FileDigest& d);

// True when text is 64 lowercase hex digits.
bool isSha256Hex(const std::string& text);

}  // namespace plab
