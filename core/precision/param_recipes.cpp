#include "precision/param_recipes.h"

#include <algorithm>

#include "precision/state_layout.h"

namespace plab {
namespace {

bool lowPrecision(const TrainableParam& p) {
  return p.param.scalar_type() == torch::kBFloat16 || p.param.scalar_type() == torch::kFloat16;
}

}  // namespace

std::string momentPrecisionOf(const std::vector<TrainableParam>& params, OptimizerMode mode,
                              const AdamWOptions& options) {
  std::vector<std::string> ids;
  for (const TrainableParam& p : params) {
    if (!lowPrecision(p)) continue;
    const std::string id = momentPrecisionId(
        state_layout::moments(p.recipe.value_or(mode), state_layout::withStore(options, p.moments), true));
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
  if (ids.empty()) return momentPrecisionId(state_layout::moments(mode, options, false));
  std::string out = ids.front();
  for (size_t i = 1; i < ids.size(); ++i) out += "+" + ids[i];
  return out;
}

std::set<std::string> layersHoldingPending(const std::vector<TrainableParam>& params, OptimizerMode mode) {
  std::set<std::string> out;
  for (const TrainableParam& p : params) {
    const OptimizerMode r = p.recipe.value_or(mode);
    if (lowPrecision(p) && (r == OptimizerMode::Bf16Kahan || state_layout::hasMaster(r, true))) out.insert(p.layer);
  }
  return out;
}

}  // namespace plab
