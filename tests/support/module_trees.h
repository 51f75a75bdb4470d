#pragma once
// Hand-made module trees for the layer tree and plan tests.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model/module_tree.h"

namespace plab::test {

// A module owning `own` parameters above its children's (totals summed),
// named after the last part of its path (the type for the root "").
inline ModuleNode moduleNode(const std::string& path, const std::string& type, int64_t own,
                             std::vector<ModuleNode> children = {}) {
  ModuleNode n;
  n.path = path;
  n.name = path.empty() ? type : path.substr(path.rfind('.') == std::string::npos ? 0 : path.rfind('.') + 1);
  n.type = type;
  n.ownParameters = own;
  n.totalParameters = own;
  for (const auto& c : children) n.totalParameters += c.totalParameters;
  n.children = std::move(children);
  return n;
}

inline ModuleNode leafModule(const std::string& path, const std::string& type, int64_t params) {
  return moduleNode(path, type, params);
}

inline ModuleNode groupModule(const std::string& path, const std::string& type, std::vector<ModuleNode> children) {
  return moduleNode(path, type, 0, std::move(children));
}

}  // namespace plab::test
