#include "charts/run_colors.h"

namespace plab::ui {

QColor toQColor(const plab::Rgb& c) { return QColor(c.r, c.g, c.b); }

std::vector<QColor> runColors(const std::vector<plab::RunRecord>& runs) {
  std::vector<plab::OptimizerMode> modes;
  modes.reserve(runs.size());
  for (const auto& r : runs) modes.push_back(r.config.mode);
  std::vector<QColor> out;
  for (const plab::Rgb& c : plab::runColors(modes)) out.push_back(toQColor(c));
  return out;
}

}  // namespace plab::ui
