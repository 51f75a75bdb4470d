#include "hub/hf_cache.h"
#include "hub/hub_names.h"
#include "util/env.h"
#include "util/json_file.h"
#include "util/json_limits.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace plab {

namespace fs = std::filesystem;

namespace {

std::string readTrimmed(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string s = buffer.str();
  const auto last = s.find_last_not_of(" \t\r\n");
  s.erase(last == std::string::npos ? 0 : last + 1);
  return s;
}

std::string modelTypeOf(const fs::path& configJson) {
  // An unreadable config (of any size or type: the reader caps both) is
  // listed with an empty model type.
  const JsonFile read = readJsonFile(configJson);
  if (read.ok() && read.value.is_object() && read.value.contains("model_type") &&
      read.value.at("model_type").is_string())
    return read.value.at("model_type").get<std::string>();
  return "";
}

}  // namespace

fs::path hfHome() {
  if (auto home = envOrEmpty("HF_HOME"); !home.empty()) return home;
  if (auto xdg = envOrEmpty("XDG_CACHE_HOME"); !xdg.empty()) return fs::path(xdg) / "huggingface";
  const std::string user = envOrEmpty("HOME");
  return fs::path(user.empty() ? "." : user) / ".cache" / "huggingface";
}

fs::path hfHubCache() {
  if (auto hub = envOrEmpty("HF_HUB_CACHE"); !hub.empty()) return hub;
  if (auto legacy = envOrEmpty("HUGGINGFACE_HUB_CACHE"); !legacy.empty()) return legacy;
  return hfHome() / "hub";
}

fs::path repoCacheDir(const std::string& repoId) {
  std::string folder = "models--";
  for (char c : repoId) {
    if (c == '/')
      folder += "--";
    else
      folder += c;
  }
  return hfHubCache() / folder;
}

std::vector<CachedModel> listCachedModels() {
  std::vector<std::pair<fs::file_time_type, CachedModel>> found;
  std::error_code ec;
  const fs::path cache = hfHubCache();
  if (!fs::is_directory(cache, ec)) return {};
  for (const auto& repoDir : fs::directory_iterator(cache, ec)) {
    const std::string name = repoDir.path().filename().string();
    if (name.rfind("models--", 0) != 0) continue;
    std::string repoId = name.substr(8);
    for (auto pos = repoId.find("--"); pos != std::string::npos; pos = repoId.find("--", pos + 1))
      repoId.replace(pos, 2, "/");
    std::error_code snapEc;
    for (const auto& snap : fs::directory_iterator(repoDir.path() / "snapshots", snapEc)) {
      std::error_code fileEc;
      if (!fs::is_regular_file(snap.path() / "config.json", fileEc)) continue;
      CachedModel m;
      m.repoId = repoId;
      m.revision = snap.path().filename().string();
      m.snapshotDir = snap.path();
      m.modelType = modelTypeOf(snap.path() / "config.json");
      for (const auto& f : fs::recursive_directory_iterator(snap.path(), fileEc)) {
        std::error_code sizeEc;
        if (!fs::is_regular_file(f.path(), sizeEc)) continue;  // follows blob symlinks
        m.sizeBytes += fs::file_size(f.path(), sizeEc);
        if (f.path().extension() == ".safetensors") m.hasWeights = true;
      }
      std::error_code timeEc;
      const auto when = fs::last_write_time(snap.path() / "config.json", timeEc);
      found.emplace_back(when, std::move(m));
    }
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<CachedModel> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

std::optional<fs::path> findCachedSnapshot(const std::string& repoId, const std::string& revision) {
  validateRepoId(repoId);
  validateRevision(revision);
  const fs::path repo = repoCacheDir(repoId);
  std::error_code ec;
  std::string commit = revision;
  if (fs::is_regular_file(repo / "refs" / revision, ec)) commit = readTrimmed(repo / "refs" / revision);
  if (commit.empty() || commit.find("..") != std::string::npos || commit.front() == '/') return std::nullopt;
  const fs::path snapshot = repo / "snapshots" / commit;
  if (fs::is_directory(snapshot, ec)) return snapshot;
  return std::nullopt;
}

}  // namespace plab
