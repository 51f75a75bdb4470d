#include "train/checkpoint_manifest.h"

#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "util/atomic_file.h"
#include "util/errors.h"
#include "util/file_digest.h"
#include "util/file_names.h"
#include "util/json_file.h"
#include "util/json_limits.h"

namespace plab {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A checkpoint has a handful of files: a larger manifest is not one.
constexpr std::uint64_t kMaxManifestBytes = 1 << 20;

[[noreturn]] void refuseManifest(const fs::path& file, const std::string& problem) {
  throw ConfigError("cannot resume: " + file.string() + ": " + problem);
}

// The entries of dir but the manifest, by name.
std::set<std::string> entriesOf(const fs::path& dir) {
  std::set<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename() != kCheckpointManifestName) names.insert(it->path().filename().string());
  if (ec) throw IoError("cannot list " + dir.string() + ": " + ec.message());
  return names;
}

FileDigest recorded(const json& entry, const std::string& name, const fs::path& manifest) {
  const std::string where = "'files." + textExcerpt(name) + "'";
  if (!entry.is_object() || entry.size() != 2 || !entry.contains("bytes") || !entry.contains("sha256"))
    refuseManifest(manifest, where + " must be {\"bytes\": N, \"sha256\": HEX}, not " + jsonExcerpt(entry));
  const json& bytes = entry.at("bytes");
  const json& sha = entry.at("sha256");
  if (!bytes.is_number_unsigned())
    refuseManifest(manifest, where + ".bytes must be a whole number of bytes, not " + jsonExcerpt(bytes));
  if (!sha.is_string() || !isSha256Hex(sha.get<std::string>()))
    refuseManifest(manifest, where + ".sha256 must be 64 lowercase hex digits, not " + jsonExcerpt(sha));
  return FileDigest{bytes.get<std::uint64_t>(), sha.get<std::string>()};
}

}  // namespace

void writeCheckpointManifest(const fs::path& dir) {
  json files = json::object();
  for (const std::string& name : entriesOf(dir)) {
    std::string problem;
    const auto digest = digestRegularFile(dir / name, problem);
    if (!digest) throw IoError("checkpoint " + (dir / name).string() + " " + problem);
    files[name] = toJson(*digest);
  }
  writeJsonFileAtomically(dir / kCheckpointManifestName, {{"files", files}});
}

void verifyCheckpointManifest(const fs::path& dir) {
  const fs::path manifest = dir / kCheckpointManifestName;
  JsonFile read = readJsonFile(manifest, kMaxManifestBytes);
  if (read.status == JsonFileStatus::Missing)
    throw ConfigError("cannot resume: " + dir.string() + " has no " + kCheckpointManifestName +
                      " (the checksums of its files, written last: the checkpoint was not completed, or was "
                      "written before checkpoints recorded them); it cannot be checked");
  if (!read.ok()) refuseManifest(manifest, read.problem);
  const json& j = read.value;
  if (!j.is_object() || j.size() != 1 || !j.contains("files") || !j.at("files").is_object())
    refuseManifest(manifest, "must be {\"files\": {NAME: {\"bytes\": N, \"sha256\": HEX}, ...}}");
  std::map<std::string, FileDigest> expected;
  for (const auto& [name, entry] : j.at("files").items()) {
    if (!isPlainFileName(name) || name == kCheckpointManifestName)
      refuseManifest(manifest, "'" + textExcerpt(name) + "' is not the name of a file in the checkpoint folder");
    expected[name] = recorded(entry, name, manifest);
  }
  for (const std::string& name : entriesOf(dir))
    if (!expected.count(name))
      refuseManifest(dir / name, std::string("is not listed in ") + kCheckpointManifestName +
                             " (it was added after the checkpoint was written)");
  // Sizes first: a truncated or swapped file is named without reading the rest.
  for (const auto& [name, want] : expected) {
    const fs::path file = dir / name;
    std::error_code ec;
    const auto status = fs::status(file, ec);
    if (ec || !fs::exists(status)) refuseManifest(file, std::string("is missing (") + kCheckpointManifestName + " lists it)");
    if (!fs::is_regular_file(status)) refuseManifest(file, "is not a regular file");
    const auto size = fs::file_size(file, ec);
    if (!ec && size != want.bytes)
      refuseManifest(file, "is " + std::to_string(size) + " bytes, " + kCheckpointManifestName + " records " +
                       std::to_string(want.bytes) + ": it changed after the checkpoint was written");
  }
  for (const auto& [name, want] : expected) {
    const fs::path file = dir / name;
    std::string problem;
    const auto got = digestRegularFile(file, problem);
    if (!got) refuseManifest(file, problem);
    if (got->bytes != want.bytes || got->sha256 != want.sha256)
      refuseManifest(file, "its sha256 is " + got->sha256 + ", " + kCheckpointManifestName + " records " + want.sha256 +
                       ": its bytes changed after the checkpoint was written (a disk error, or an edit)");
  }
}

}  // namespace plab
