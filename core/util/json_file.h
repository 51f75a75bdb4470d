#pragma once
// The one reader for JSON files the tool reads back from disk (a run's
// config.json, run_info.json, summary.json, display.json, the workspace's
// linked-runs.json) and for line files (metrics.jsonl). Such a file may be
// anything: a FIFO (opening it would wait for a writer forever), a link to
// /dev/zero (endless), hundreds of MB, 200 000 '[' (the parser's copies
// recurse once per level). Every limit is checked before anything is parsed.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace plab {

// Far above any metadata file the tool writes (run_info.json with
// per-layer figures stays under 100 KiB).
inline constexpr std::uint64_t kMaxJsonFileBytes = 16ull << 20;
// One metrics.jsonl record with per-layer statistics stays under 64 KiB.
inline constexpr std::uint64_t kMaxJsonLineBytes = 1ull << 20;

enum class JsonFileStatus {
  Read,       // value holds the document
  Missing,    // no such file (nor a link to one)
  Refused,    // not a regular file, too big, not UTF-8, nested too deep, cannot open or read
  Malformed,  // a regular file of acceptable size that is not valid JSON (a torn write)
};

struct JsonFile {
  JsonFileStatus status = JsonFileStatus::Missing;
  nlohmann::json value;  // null unless Read
  std::string problem;   // why not, to be put after the file's name: "is a FIFO (named pipe), not a regular file"
  bool ok() const { return status == JsonFileStatus::Read; }
};

// Never throws, never blocks on a FIFO or device, never reads more than
// maxBytes (+1 to see it is over). A number past a double's range is named
// by its field ("number 1e999 in 'adamw.lr' is beyond ..."). With
// refuseDuplicateKeys, a key given twice in one object is Malformed too (the
// parser would keep the last silently): for the tool's own formats.
JsonFile readJsonFile(const std::filesystem::path& path, std::uint64_t maxBytes = kMaxJsonFileBytes,
                      bool refuseDuplicateKeys = false);

// "" when text is valid UTF-8, else "is not valid UTF-8 (at byte N)".
std::string utf8Problem(std::string_view text);

// "" when text (one document) is within the nesting cap, valid UTF-8 and
// JSON; else why not. Parses into value.
std::string parseJsonText(std::string_view text, nlohmann::json& value);

// Calls onLine for each line of a regular file (without its '\n'); a line
// longer than maxLineBytes is passed as empty with tooLong set (its bytes are
// never held). Reads no more than the size the file had when opened (a
// file still being appended is read up to there). Returns "" or why the
// file could not be read (the same refusals as readJsonFile).
std::string forEachLine(const std::filesystem::path& path, std::uint64_t maxLineBytes,
                        const std::function<void(std::string_view line, bool tooLong)>& onLine);

}  // namespace plab
