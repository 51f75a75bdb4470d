#pragma once
// Derived files (summaries, reports, charts) are replaced whole: written to a
// hidden temporary name in the same folder, synced, then renamed over the
// target. A reader, a crash or a full disk leaves either the old file or the
// new one, never a torn or empty one.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace plab {

// Throws IoError naming the file; the temporary is removed on failure.
void writeFileAtomically(const std::filesystem::path& file, const std::string& content);

// dump(2) plus a newline; invalid UTF-8 in strings becomes U+FFFD instead of
// throwing, so a stray byte in an error message cannot empty the file.
std::string dumpJsonForFile(const nlohmann::json& j);
void writeJsonFileAtomically(const std::filesystem::path& file, const nlohmann::json& j);

}  // namespace plab
