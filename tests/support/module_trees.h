#pragma once
// Hand-made module trees for the layer tree and plan tests: a leaf module
// with its own parameters, a group summing its children's.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model/module_tree.h"

namespace plab::test {

inline ModuleNode leafModule(const std::string& path, const std::string& type, int64_t params) {
  ModuleNode n;
  n.path = path;
  n.name = path.substr(path.rfind('.') + 1);
  n.type = type;
  n.ownParameters = params;
  n.totalParameters = params;
  return n;
}

inline ModuleNode groupModule(const std::string& path, const std::string& type, std::vector<ModuleNode> children) {
  ModuleNode n;
  n.path = path;
  n.name = path.empty() ? type : path.substr(path.rfind('.') + 1);
  n.type = type;
  n.children = std::move(children);
  for (const auto& c : n.children) n.totalParameters += c.totalParameters;
  return n;
}

}  // namespace plab::test
