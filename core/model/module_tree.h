#pragma once
// The module hierarchy of a model as plain data, for the layer tree in the
// UI and for precision plans. Torch-free.
#include <cstdint>
#include <string>
#include <vector>

namespace torch::nn { class Module; }

namespace plab {

struct ModuleNode {
  std::string path;        // full HF path, "" for the root, e.g. "transformer.h.0.attn.c_attn"
  std::string name;        // last path component ("c_attn"), root: model class
  std::string type;        // short class name: "GPT2LMHeadModel", "Conv1D", "Linear", "LayerNorm", "RMSNorm", "Embedding", ...
  int64_t ownParameters = 0;    // elements of parameters registered directly on this module
  int64_t totalParameters = 0;  // including all descendants
  std::vector<ModuleNode> children;
};

ModuleNode describeModules(const torch::nn::Module& root);

}  // namespace plab
