#include "panels/layer_recipes.h"

#include <set>

#include "util/errors.h"

namespace plab::ui {
namespace {

bool inRecipeSubtree(const std::string& path, const std::string& root) {
  return root.empty() || path == root || path.compare(0, root.size() + 1, root + ".") == 0;
}

// bf16Only false: every module with parameters, whatever its precision.
void collectRecipes(const plab::ModuleNode& node, const std::map<std::string, plab::LayerPrecision>& precision,
                    const std::map<std::string, plab::OptimizerMode>& recipes, std::set<plab::OptimizerMode>& out,
                    bool bf16Only = true) {
  const auto p = precision.find(node.path);
  const auto r = recipes.find(node.path);
  const bool bf16 = p != precision.end() && p->second == plab::LayerPrecision::Bf16;
  if (node.ownParameters > 0 && (bf16 || !bf16Only) && r != recipes.end()) out.insert(r->second);
  for (const plab::ModuleNode& child : node.children) collectRecipes(child, precision, recipes, out, bf16Only);
}

}  // namespace

std::map<std::string, plab::OptimizerMode> resolvedRecipesOrEmpty(const plab::PrecisionPlan& plan,
                                                                  const plab::ModuleNode& modules,
                                                                  plab::OptimizerMode mode) {
  if (!plab::modeIsLayerRecipe(mode)) return {};
  try {
    return plan.resolveRecipes(modules, mode);
  } catch (const plab::ConfigError&) {
    return {};
  }
}

std::map<std::string, plab::MomentPrecision> resolvedMomentsOrEmpty(const plab::PrecisionPlan& plan,
                                                                    const plab::ModuleNode& modules,
                                                                    plab::OptimizerMode mode) {
  if (plan.moments.empty() || !plab::modeIsLayerRecipe(mode)) return {};
  try {
    return plan.resolveMoments(modules, mode);
  } catch (const plab::ConfigError&) {
    return {};
  }
}

QString recipeNote(const plab::ModuleNode& subtree, const std::map<std::string, plab::LayerPrecision>& precision,
                   const std::map<std::string, plab::OptimizerMode>& recipes, plab::OptimizerMode mode) {
  std::set<plab::OptimizerMode> used;
  collectRecipes(subtree, precision, recipes, used);
  if (used.empty() || (used.size() == 1 && *used.begin() == mode)) return {};
  if (used.size() == 1) return " · " + QString::fromStdString(plab::optimizerModeId(*used.begin()));
  return QString(" · %1 recipes").arg(used.size());
}

std::optional<plab::OptimizerMode> subtreeRecipe(const plab::ModuleNode& subtree,
                                                 const std::map<std::string, plab::LayerPrecision>& precision,
                                                 const std::map<std::string, plab::OptimizerMode>& recipes) {
  std::set<plab::OptimizerMode> used;
  collectRecipes(subtree, precision, recipes, used);
  if (used.empty()) collectRecipes(subtree, precision, recipes, used, false);
  if (used.size() != 1) return std::nullopt;
  return *used.begin();
}

void addRecipeSection(QMenu& menu, const std::string& path, const plab::PrecisionPlan& plan, plab::OptimizerMode mode,
                      std::optional<plab::OptimizerMode> current,
                      const std::function<void(std::optional<plab::OptimizerMode>)>& set) {
  const QString where = path.empty() ? QString("the whole model") : QString::fromStdString(path);
  if (!plab::modeIsLayerRecipe(mode)) {
    menu.addSection(QString("Recipes of %1: bf16 modes only").arg(where));
    return;
  }
  menu.addSection(QString("Recipe of %1's bf16 layers").arg(where));
  for (plab::OptimizerMode m : plab::allOptimizerModes()) {
    if (!plab::modeIsLayerRecipe(m)) continue;
    QAction* a = menu.addAction(QString::fromStdString(plab::optimizerModeId(m) + "  (" + plab::optimizerModeLabel(m) + ")"));
    a->setData(QString::fromStdString(plab::optimizerModeId(m)));
    a->setCheckable(true);
    a->setChecked(current == m);
    QObject::connect(a, &QAction::triggered, &menu, [set, m] { set(m); });
  }
  if (plan.recipes.count(path)) {
    QAction* back = menu.addAction("as the run's mode (remove this row's recipe)");
    QObject::connect(back, &QAction::triggered, &menu, [set] { set(std::nullopt); });
  }
}

plab::PrecisionPlan withSubtreeRecipe(plab::PrecisionPlan plan, const std::string& path,
                                      std::optional<plab::OptimizerMode> recipe) {
  for (auto it = plan.recipes.begin(); it != plan.recipes.end();) {
    if (it->first != path && inRecipeSubtree(it->first, path)) it = plan.recipes.erase(it);
    else ++it;
  }
  if (recipe) plan.setRecipeSubtree(path, *recipe);
  else plan.recipes.erase(path);
  return plan;
}

}  // namespace plab::ui
