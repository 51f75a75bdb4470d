#pragma once
// Reading a whole input file (config.json, tokenizer.json, merges.txt, ...)
// that must be a regular file: a directory, FIFO, socket or device given in
// its place is named as such instead of failing later as "invalid JSON",
// and a FIFO never blocks the read waiting for a writer.
#include <filesystem>
#include <optional>
#include <string>

namespace plab {

// The file's bytes; nullopt with `problem` set to why not ("is a directory,
// not a file", "is a FIFO (named pipe), not a regular file", "cannot open
// (No such file or directory)", ...), to be put after the file's name.
std::optional<std::string> readRegularFile(const std::filesystem::path& path, std::string& problem);

// Why a file of this st_mode is not a regular file: "is a directory, not a
// file", "is a FIFO (named pipe), not a regular file", ... (util/json_file too).
const char* notRegularFileReason(unsigned mode);

}  // namespace plab
