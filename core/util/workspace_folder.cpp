#include "util/workspace_folder.h"

#include <cstdlib>
#include <string>

namespace plab {
namespace {

std::string envValue(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::string(value) : std::string();
}

}  // namespace

std::filesystem::path defaultWorkspaceFolder() {
  if (const std::string explicitFolder = envValue("PLAB_WORKSPACE"); !explicitFolder.empty()) return explicitFolder;
  std::filesystem::path data = envValue("XDG_DATA_HOME");
  // The XDG spec ignores relative values.
  if (data.empty() || data.is_relative()) {
    const std::string home = envValue("HOME");
    if (home.empty()) return "runs";
    data = std::filesystem::path(home) / ".local" / "share";
  }
  return data / "Precision Lab" / "Precision Lab" / "workspace";
}

}  // namespace plab
