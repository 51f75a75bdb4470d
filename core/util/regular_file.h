#pragma once
// Reading a whole input file (config.json, tokenizer.json, merges.txt, ...)
// that must be a regular file: a directory, FIFO, socket or device given in
// its place is named as such instead of failing later as "invalid JSON",
// and a FIFO never blocks the read waiting for a writer.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace plab {

// Far above the largest tokenizer.json in the wild (Gemma's, 33 MB): a
// bigger input file is a mistake, and reading it whole would take the memory.
inline constexpr std::uint64_t kMaxInputFileBytes = 256ull << 20;

// The file's bytes; nullopt with `problem` set to why not ("is a directory,
// not a file", "is a FIFO (named pipe), not a regular file", "cannot open
// (No such file or directory)", "is 300 MiB, over the 256 MiB limit for this
// file", ...), to be put after the file's name. Never reads more than
// maxBytes (+1 to see it is over).
std::optional<std::string> readRegularFile(const std::filesystem::path& path, std::string& problem,
                                           std::uint64_t maxBytes = kMaxInputFileBytes);

// "300 MiB", "12 KiB", "7 bytes": a size in a message.
std::string fileSizeText(std::uint64_t bytes);

// Why a file of this st_mode is not a regular file: "is a directory, not a
// file", "is a FIFO (named pipe), not a regular file", ... (util/json_file too).
const char* notRegularFileReason(unsigned mode);

}  // namespace plab
