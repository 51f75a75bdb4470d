#pragma once
// A checkpoint's own integrity: checksums.json, written last into a
// checkpoint-N folder, records the size and sha256 of every other file in it.
// A resume checks the whole folder against it before anything in it is read:
// a flipped byte in optimizer.safetensors, a truncated or swapped file, a
// file added or removed since are refused, naming the file. Torch-free.
#include <filesystem>

namespace plab {

inline constexpr const char* kCheckpointManifestName = "checksums.json";

// Records every entry of dir (regular files; dir holds nothing else when the
// tool writes it) but the manifest itself. Written atomically and last: a
// folder without it was not completed. Throws IoError naming the file.
void writeCheckpointManifest(const std::filesystem::path& dir);

// Throws ConfigError "cannot resume: <file>: <why>" when the manifest is
// missing, malformed (a regular JSON file of at most 1 MiB: {"files":
// {NAME: {"bytes": N, "sha256": HEX}}}, plain names, nothing else), when a
// listed file is missing, not a regular file, of another size or digest, or
// when dir holds an entry the manifest does not list.
void verifyCheckpointManifest(const std::filesystem::path& dir);

}  // namespace plab
