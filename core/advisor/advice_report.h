#pragma once
// The advisor's report: report.html with the frontier chart (memory saved
// against loss minus fp32, one point per plan, the chosen one marked), the
// per-layer shadow table and the confirmation runs. Torch-free.
#include <filesystem>
#include <string>

#include "advisor/advisor.h"

namespace plab {

// The frontier chart as a standalone SVG document.
std::string frontierSvg(const Advice& advice);
std::string adviceReportHtml(const Advice& advice);
// DIR/advice.json, DIR/plan.json (the chosen plan as a run config; fp32's
// when none is within tolerance), DIR/report.html and DIR/frontier.svg.
void writeAdviceFiles(const std::filesystem::path& dir, const Advice& advice, const RunConfig& base);

}  // namespace plab
