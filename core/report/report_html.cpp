#include <cmath>
#include <sstream>

#include "report/fp32_comparison.h"
#include "report/gemm_format_verdict.h"
#include "report/mode_colors.h"
#include "report/number_text.h"
#include "report/report_header.h"
#include "report/report_charts.h"
#include "report/run_figures.h"
#include "report/run_report.h"
#include "report/svg_util.h"

namespace plab {

using report::escapeXml;
using report::num;

namespace {

const char* const kCss = R"(
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px; color: #222; max-width: 1100px; }
h1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: right; }
th { background: #f3f3f3; } td.text { text-align: left; }
.chart { margin: 12px 0; }
pre { background: #f7f7f7; border: 1px solid #ddd; padding: 8px; font-size: 12px; overflow-x: auto; }
.failed { color: #b00020; } .stopped, .incomplete { color: #a66300; }
)";

std::string mibText(int64_t bytes) { return num(static_cast<double>(bytes) / (1024.0 * 1024.0), 4); }

}  // namespace

std::string renderReportHtml(const std::vector<RunRecord>& runs, const std::string& title) {
  std::ostringstream h;
  h << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" << escapeXml(title)
    << "</title>\n<style>" << kCss << "</style>\n</head>\n<body>\n";
  h << "<h1>" << escapeXml(title) << "</h1>\n";
  if (!runs.empty()) h << "<p>" << escapeXml(report::reportHeaderLine(runs)) << "</p>\n";

  h << "<h2>Verdict</h2>\n<ul>\n";
  for (size_t i = 0; i < runs.size(); ++i) {
    h << "<li><b>" << escapeXml(report::runLabel(runs, i)) << "</b>: "
      << escapeXml(report::comparisonVerdict(runs, i)) << "</li>\n";
  }
  h << "</ul>\n";
  // Low-precision GEMM runs against the bf16-GEMM run of their config and seed.
  if (const auto formats = report::gemmFormatVerdicts(runs); !formats.empty()) {
    h << "<h3>GEMM formats (simulated): against bf16 GEMMs</h3>\n<ul>\n";
    for (const report::GemmFormatVerdict& v : formats)
      h << "<li><b>" << escapeXml(v.label) << "</b>: " << escapeXml(v.text) << "</li>\n";
    h << "</ul>\n";
  }
  h << "<p><small>Update lost: over windows of K steps, the share of the summed intended AdamW update "
       "(what fp32 arithmetic would change) that did not reach the weights the forward pass uses; fp32 reads 0. "
       "Rounded away: elements whose intended update was non-zero but whose stored weight did not change in a "
       "single step (Kahan and stochastic rounding defer or randomise writes, so this stays high for them).</small></p>\n";

  // Quantized moments: their mean moment error (docs/metrics.md), after the store's name.
  const auto momentErrorText = [](const RunResult& res) {
    if (!res.meanMomentErrorM || !res.meanMomentErrorV) return std::string();
    return " (error m " + report::percentText(*res.meanMomentErrorM, 2) + ", v " +
           report::percentText(*res.meanMomentErrorV, 2) + ")";
  };
  // A plan's per-layer moment stores (PrecisionPlan::moments) after the stores the layers got.
  const auto layerStoresText = [](const RunRecord& r) {
    std::string text;
    for (const auto& [path, store] : r.config.plan.moments)
      text += (text.empty() ? "; plan: " : ", ") + (path.empty() ? std::string("(model)") : path) + " " +
              momentPrecisionId(store);
    return text;
  };
  h << "<h2>Summary</h2>\n<table>\n<tr><th>run</th><th>mode</th><th title=\"the fp32 run this run is measured against: the same config except "
       "mode and plan\">fp32 twin</th><th>status</th><th>moments</th><th>steps</th><th>final loss</th>"
       "<th>final val loss</th><th>memory</th><th title=\"training state: weights, gradients, moments, master copies and Kahan "
       "buffers, against all-fp32 AdamW\">state saved vs fp32</th><th title=\"1 - the run's measured training "
       "peak / the fp32 run's\">measured peak saved vs fp32</th><th>mean update lost</th>"
       "<th>mean update error</th><th>mean rounded away</th><th>tokens/s</th></tr>\n";
  std::vector<OptimizerMode> modes;
  for (const RunRecord& r : runs) modes.push_back(r.config.mode);
  const std::vector<Rgb> colors = runColors(modes);  // the charts' colours
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunRecord& r = runs[i];
    const RunResult res = report::shownResult(r);
    // The same texts as the app's table and the PDF (report/run_figures.h).
    const report::RunFigureTexts f = report::runFigureTexts(runs, i);
    const auto pct = [](const std::optional<double>& v) { return v ? report::percentText(*v, 2) : std::string("–"); };
    h << "<tr><td class=\"text\" style=\"color:" << hexColor(colors[i]) << ";font-weight:bold\">"
      << escapeXml(report::runLabel(runs, i)) << "</td><td class=\"text\">" << escapeXml(optimizerModeLabel(r.config.mode))
      << "</td><td class=\"text\">" << escapeXml(report::fp32TwinCell(runs, i)) << "</td><td class=\"text " << f.status << "\">" << f.status << "</td><td class=\"text\">"
      << escapeXml(r.info.momentPrecision.empty() ? "–" : r.info.momentPrecision) << escapeXml(layerStoresText(r))
      << momentErrorText(res) << "</td><td>" << f.steps << "</td><td>"
      << f.finalLoss << "</td><td>" << f.finalValLoss << "</td><td>" << f.memory << "</td><td>" << f.stateSaved << "</td><td>"
      << escapeXml(f.peakSaved) << "</td><td>" << f.updateLost << "</td><td>" << pct(res.meanUpdateError) << "</td><td>"
      << f.roundedAway << "</td><td>" << f.tokensPerSecond << "</td></tr>\n";
  }
  h << "</table>\n";
  // Why runs ended early, under the table rather than in a cell.
  for (size_t i = 0; i < runs.size(); ++i)
    if (const RunRecord& r = runs[i]; !r.result.message.empty())
      h << "<p class=\"" << report::runStatusText(r) << "\"><b>" << escapeXml(report::runLabel(runs, i)) << "</b> ("
        << report::runStatusText(r) << "): " << escapeXml(r.result.message) << "</p>\n";

  h << "<h2>Memory breakdown (MiB)</h2>\n<table>\n<tr><th>run</th><th>weights</th><th>gradients</th>"
       "<th>moments</th><th>master</th><th>kahan</th><th title=\"the fp32 scale per block of quantized moments "
       "(adamw.moments 8bit, 4bit, fp8)\">scales</th><th>total</th><th>predicted total</th>"
       "<th title=\"a training step's measured peak above the memory resident before it: activations and "
       "temporaries\">step peak above state</th><th title=\"what the process held for training at its measured "
       "peak, above what it held before the model was loaded\">measured training peak</th></tr>\n";
  if (!runs.empty()) {
    const MemoryBreakdown b = report::headerFp32Baseline(runs);
    h << "<tr><td class=\"text\">fp32 AdamW baseline</td><td>" << mibText(b.weights) << "</td><td>"
      << mibText(b.gradients) << "</td><td>" << mibText(b.moments) << "</td><td>" << mibText(b.master) << "</td><td>"
      << mibText(b.kahan) << "</td><td>" << mibText(b.scales) << "</td><td>" << mibText(b.total())
      << "</td><td>-</td><td>-</td><td>-</td></tr>\n";
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunRecord& r = runs[i];
    const MemoryBreakdown& m = r.result.memory;
    h << "<tr><td class=\"text\">" << escapeXml(report::runLabel(runs, i)) << "</td><td>" << mibText(m.weights) << "</td><td>"
      << mibText(m.gradients) << "</td><td>" << mibText(m.moments) << "</td><td>" << mibText(m.master) << "</td><td>"
      << mibText(m.kahan) << "</td><td>" << mibText(m.scales) << "</td><td>" << mibText(m.total()) << "</td><td>"
      << mibText(r.info.predictedMemory.total()) << "</td><td>"
      << (r.result.stepPeakBytes ? mibText(*r.result.stepPeakBytes) : std::string("-")) << "</td><td>"
      << (r.result.trainingPeakBytes ? mibText(*r.result.trainingPeakBytes) : std::string("-")) << "</td></tr>\n";
  }
  h << "</table>\n";

  h << "<h2>Charts</h2>\n";
  for (const report::SvgChart& c : report::renderReportCharts(runs))
    h << "<div class=\"chart\">\n" << c.svg << "</div>\n";

  h << "<h2>Configurations</h2>\n";
  for (size_t i = 0; i < runs.size(); ++i)
    h << "<h3>" << escapeXml(report::runLabel(runs, i)) << "</h3>\n<pre>" << escapeXml(runs[i].config.toJson().dump(2))
      << "</pre>\n";
  h << "</body>\n</html>\n";
  return h.str();
}

}  // namespace plab
