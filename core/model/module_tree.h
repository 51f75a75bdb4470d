#pragma once
// The module hierarchy of a model as plain data, for the layer tree in the
// UI and for precision plans. Torch-free (describeModules takes a declared
// torch::nn::Module; model/causal_lm.h adds the tied head of a model).
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
  // A module that computes with another module's weight and owns none (a
  // tied lm_head): that module's path. It trains and is stored in the
  // owner's precision.
  std::string tiedTo;
};

ModuleNode describeModules(const torch::nn::Module& root);

// Appends the tied output head "lm_head" (no parameters of its own, tiedTo
// ownerPath) to a model's tree, so that the layer tree shows where the head's
// matrix product runs. Both tree builders call it for tied models.
void addTiedHead(ModuleNode& root, const std::string& ownerPath);

}  // namespace plab
