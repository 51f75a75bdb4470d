// applyPrecisionPlan: resolves a plan against a torch module and converts
// the parameters in place. The module tree is built here from torch's own
// registry (describeModules belongs to the model area; this only needs
// paths, short type names and own parameter counts).
#include <unordered_set>

#include "model/quantized_linear.h"
#include "precision/precision_adamw.h"
#include "precision/state_layout.h"
#include "util/errors.h"

namespace plab {
namespace {

// "torch::nn::LinearImpl" -> "Linear", "plab::Conv1DImpl" -> "Conv1D";
// the short class names module_tree.h documents.
std::string unqualifiedTypeName(const std::string& qualified) {
  std::string name = qualified;
  if (name.find('<') == std::string::npos) {
    const auto colon = name.rfind("::");
    if (colon != std::string::npos) name = name.substr(colon + 2);
  }
  const std::string suffix = "Impl";
  if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
    name.resize(name.size() - suffix.size());
  return name;
}

std::string joinPath(const std::string& parent, const std::string& child) {
  return parent.empty() ? child : parent + "." + child;
}

ModuleNode moduleTree(const torch::nn::Module& module, const std::string& path, const std::string& name) {
  ModuleNode node;
  node.path = path;
  node.type = unqualifiedTypeName(module.name());
  node.name = path.empty() ? node.type : name;
  for (const auto& item : module.named_parameters(/*recurse=*/false)) node.ownParameters += item.value().numel();
  node.totalParameters = node.ownParameters;
  for (const auto& child : module.named_children()) {
    node.children.push_back(moduleTree(*child.value(), joinPath(path, child.key()), child.key()));
    node.totalParameters += node.children.back().totalParameters;
  }
  return node;
}

struct Converter {
  const std::map<std::string, LayerPrecision>* resolved;  // null: everything fp32
  const std::map<std::string, OptimizerMode>* recipes;    // path -> recipe; null: the mode everywhere
  const std::map<std::string, MomentPrecision>* moments;  // path -> store; null: adamw.moments everywhere
  OptimizerMode mode;
  std::unordered_set<const void*> seen;
  std::vector<TrainableParam> out;

  void visit(const torch::nn::Module& module, const std::string& path) {
    LayerPrecision precision = LayerPrecision::Fp32;
    if (resolved) {
      auto it = resolved->find(path);
      if (it != resolved->end()) precision = it->second;
    }
    for (const auto& item : module.named_parameters(/*recurse=*/false)) {
      torch::Tensor param = item.value();
      // A tied weight (lm_head sharing the embedding) follows its first owner.
      if (!seen.insert(param.unsafeGetTensorImpl()).second) continue;
      if (!param.is_floating_point()) continue;
      // A plan's low-precision layer holds fp16 under the fp16 modes.
      const auto lowPrecision = modeUsesFp16(mode) ? torch::kFloat16 : torch::kBFloat16;
      const auto target = precision == LayerPrecision::Bf16 ? lowPrecision : torch::kFloat32;
      TrainableParam tp{joinPath(path, item.key()), path, param, torch::Tensor()};
      if (recipes && target == lowPrecision) {
        const auto r = recipes->find(path);
        if (r != recipes->end() && r->second != mode) tp.recipe = r->second;
      }
      if (moments) {  // fp32 layers too: a quantized store takes them, as adamw.moments does
        const auto m = moments->find(path);
        if (m != moments->end()) tp.moments = m->second;
      }
      if (param.scalar_type() != target) {
        // Mixed keeps the unrounded fp32 values as the master copy; the old
        // storage is free to adopt since set_data swaps in a new one.
        if (state_layout::hasMaster(tp.recipe.value_or(mode), true) && param.scalar_type() == torch::kFloat32)
          tp.fp32Source = param.detach();
        param.set_data(param.detach().to(target));
        if (param.grad().defined()) param.mutable_grad() = torch::Tensor();  // old dtype
      }
      if (param.requires_grad()) out.push_back(std::move(tp));
    }
    for (const auto& child : module.named_children()) visit(*child.value(), joinPath(path, child.key()));
  }
};

}  // namespace

std::vector<TrainableParam> applyPrecisionPlan(torch::nn::Module& model, const PrecisionPlan& plan,
                                               OptimizerMode mode) {
  torch::NoGradGuard noGrad;
  std::map<std::string, LayerPrecision> resolved;
  std::map<std::string, OptimizerMode> recipes;
  std::map<std::string, MomentPrecision> moments;
  const bool fp32Only = mode == OptimizerMode::Fp32AdamW;  // the reference ignores the plan
  if (!fp32Only) {
    const ModuleNode tree = moduleTree(model, "", "");
    resolved = plan.resolve(tree);
    recipes = plan.resolveRecipes(tree, mode);
    moments = plan.resolveMoments(tree, mode);
  }
  Converter converter{fp32Only ? nullptr : &resolved, fp32Only ? nullptr : &recipes,
                      fp32Only ? nullptr : &moments, mode, {}, {}};
  converter.visit(model, "");
  // The plan's GEMM formats go into the layers' slots (the reference keeps bf16: its own dtype).
  applyGemmFormats(model, plan, fp32Only);
  return std::move(converter.out);
}

}  // namespace plab
