#pragma once
// The layer tree's per-layer recipes (PrecisionPlan::recipes): what a row's
// Precision cell adds ("bf16 · bf16-sr") and the context menu's section that
// sets a subtree's recipe. Kept apart from the panel, which lays out rows.
#include <QMenu>
#include <QString>

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "model/module_tree.h"
#include "precision/precision_plan.h"

namespace plab::ui {

// Path -> recipe of every module with parameters under `mode`; empty when
// the mode takes no per-layer recipes or the plan names a module the model
// lacks (the summary says which).
std::map<std::string, plab::OptimizerMode> resolvedRecipesOrEmpty(const plab::PrecisionPlan& plan,
                                                                  const plab::ModuleNode& modules,
                                                                  plab::OptimizerMode mode);

// Path -> moment store of every module a plan's "moments" entry reaches
// (PrecisionPlan::resolveMoments); empty when the mode takes none or the
// entries do not resolve on this model (the summary says so). The tree
// shows them read-only: a plan file sets them.
std::map<std::string, plab::MomentPrecision> resolvedMomentsOrEmpty(const plab::PrecisionPlan& plan,
                                                                    const plab::ModuleNode& modules,
                                                                    plab::OptimizerMode mode);

// " · bf16-sr" when the subtree's bf16 modules all step with one recipe other
// than the run's mode, " · 2 recipes" when they differ, "" otherwise.
QString recipeNote(const plab::ModuleNode& subtree, const std::map<std::string, plab::LayerPrecision>& precision,
                   const std::map<std::string, plab::OptimizerMode>& recipes, plab::OptimizerMode mode);

// The one recipe the subtree's bf16 modules step with (of all its modules
// with parameters when none is bf16: what ticking the row would give);
// nullopt when they differ or there are none.
std::optional<plab::OptimizerMode> subtreeRecipe(const plab::ModuleNode& subtree,
                                                 const std::map<std::string, plab::LayerPrecision>& precision,
                                                 const std::map<std::string, plab::OptimizerMode>& recipes);

// Adds "Recipe of <path>'s bf16 layers" with every layer recipe, `current`
// ticked (subtreeRecipe), and a way back to the run's mode where the row has
// its own; `set` gets the choice (nullopt: remove the row's recipe).
void addRecipeSection(QMenu& menu, const std::string& path, const plab::PrecisionPlan& plan, plab::OptimizerMode mode,
                      std::optional<plab::OptimizerMode> current,
                      const std::function<void(std::optional<plab::OptimizerMode>)>& set);

// The plan with `path`'s subtree given `recipe` (deeper recipes cleared);
// nullopt removes the row's own. The root ("") clears every recipe first.
plab::PrecisionPlan withSubtreeRecipe(plab::PrecisionPlan plan, const std::string& path,
                                      std::optional<plab::OptimizerMode> recipe);

}  // namespace plab::ui
