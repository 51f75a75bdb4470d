#pragma once
// The local Hugging Face cache, laid out like huggingface_hub:
// $HF_HUB_CACHE (default $HF_HOME/hub, HF_HOME default ~/.cache/huggingface)
//   models--org--name/refs/main            (commit hash)
//   models--org--name/blobs/<etag>         (file contents)
//   models--org--name/snapshots/<commit>/  (files, symlinks into blobs)
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace plab {

std::filesystem::path hfHome();
std::filesystem::path hfHubCache();
std::filesystem::path repoCacheDir(const std::string& repoId);  // models--org--name

struct CachedModel {
  std::string repoId;          // "org/name"
  std::string revision;        // snapshot folder name (commit)
  std::filesystem::path snapshotDir;
  std::string modelType;       // from config.json, "" if unreadable
  bool hasWeights = false;     // a .safetensors file is present
  uint64_t sizeBytes = 0;
};

// Every snapshot that holds a config.json, newest first.
std::vector<CachedModel> listCachedModels();

// Snapshot folder for repoId at revision ("main" resolves refs/main).
std::optional<std::filesystem::path> findCachedSnapshot(const std::string& repoId,
                                                        const std::string& revision = "main");

}  // namespace plab
