#include "report/source_labels.h"

#include <filesystem>

namespace plab::report {
namespace {

// The last named part of a path: "a/b/" -> "b".
std::string lastPart(const std::filesystem::path& p) {
  return p.has_filename() ? p.filename().string() : p.parent_path().filename().string();
}

}  // namespace

std::string modelSourceLabel(const std::string& source, const std::string& path) {
  if (path.empty()) return "embedded tiny-gpt2";
  if (source == "hub") return path;  // "org/name" is how the Hub names it
  const std::filesystem::path p(path);
  // A model built from a config is known by its folder, as a local model is.
  if (p.filename() == "config.json") {
    const std::string folder = lastPart(p.parent_path());
    return folder.empty() ? "config.json" : folder;
  }
  return lastPart(p);
}

std::string dataSourceLabel(const std::string& path) {
  return path.empty() ? "default corpus" : lastPart(std::filesystem::path(path));
}

}  // namespace plab::report
