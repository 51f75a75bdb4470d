#include "model/module_tree.h"

#include <torch/torch.h>

namespace plab {
namespace {

// "torch::nn::LinearImpl" -> "Linear", "plab::Foo" -> "Foo".
std::string shortTypeName(const std::string& full) {
  std::string s = full;
  const auto colon = s.rfind("::");
  if (colon != std::string::npos) s = s.substr(colon + 2);
  if (s.size() > 4 && s.compare(s.size() - 4, 4, "Impl") == 0) s.resize(s.size() - 4);
  return s;
}

ModuleNode describe(const torch::nn::Module& module, const std::string& path, const std::string& name) {
  ModuleNode node;
  node.path = path;
  node.type = shortTypeName(module.name());
  node.name = path.empty() ? node.type : name;
  for (const auto& p : module.named_parameters(/*recurse=*/false)) node.ownParameters += p.value().numel();
  node.totalParameters = node.ownParameters;
  for (const auto& child : module.named_children()) {
    const std::string childPath = path.empty() ? child.key() : path + "." + child.key();
    node.children.push_back(describe(*child.value(), childPath, child.key()));
    node.totalParameters += node.children.back().totalParameters;
  }
  return node;
}

}  // namespace

ModuleNode describeModules(const torch::nn::Module& root) { return describe(root, "", ""); }

void addTiedHead(ModuleNode& root, const std::string& ownerPath) {
  ModuleNode head;
  head.path = root.path.empty() ? "lm_head" : root.path + ".lm_head";
  head.name = "lm_head";
  head.type = "Linear";
  head.tiedTo = ownerPath;
  root.children.push_back(std::move(head));
}

}  // namespace plab
