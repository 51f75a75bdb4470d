#include "advisor/advice_report.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "advisor/candidate_choice.h"
#include "report/number_text.h"
#include "report/svg_util.h"
#include "util/atomic_file.h"

namespace plab {
namespace {

using report::escapeXml;

// report/number_text.h's words (no "-0.0000"), "–" where there is no number.
std::string fixedOrDash(double v, int digits) { return std::isfinite(v) ? report::fixedText(v, digits) : "–"; }
std::string pct(double v, int digits = 1) { return std::isfinite(v) ? fixedOrDash(100 * v, digits) + " %" : "–"; }
std::string signedFixed(double v, int digits) { return std::isfinite(v) ? report::signedFixedText(v, digits) : "–"; }

// "12.3 % ± 0.4" with the se, or "–".
std::string lostCell(double lost, double se) {
  if (!std::isfinite(lost)) return "–";
  return pct(lost) + (std::isfinite(se) ? " ± " + fixedOrDash(100 * se, 1) : " ± ?");
}

}  // namespace

std::string frontierSvg(const Advice& a) {
  const double W = 640, H = 380, left = 70, right = 20, top = 30, bottom = 50;
  double yLo = -a.tolerance, yHi = 2 * a.tolerance;
  for (const AdvisorCandidate& c : a.candidates)
    if (c.lossVsFp32 && std::isfinite(*c.lossVsFp32)) {
      yLo = std::min({yLo, *c.lossVsFp32, c.ciLow});
      yHi = std::max({yHi, *c.lossVsFp32, c.ciHigh});
    }
  const double pad = 0.05 * (yHi - yLo);
  yLo -= pad;
  yHi += pad;
  // Memory saved 0..60 %, or to the next 10 % above the most saved (4-bit moments save more).
  double xHi = 0.6;
  for (const AdvisorCandidate& c : a.candidates)
    if (std::isfinite(c.memorySaved)) xHi = std::max(xHi, std::ceil(10 * c.memorySaved + 0.2) / 10);
  xHi = std::min(xHi, 1.0);
  const double xLo = 0;
  auto X = [&](double v) { return left + (std::clamp(v, xLo, xHi) - xLo) / (xHi - xLo) * (W - left - right); };
  auto Y = [&](double v) { return top + (yHi - std::clamp(v, yLo, yHi)) / (yHi - yLo) * (H - top - bottom); };
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H << "\" viewBox=\"0 0 " << W
    << ' ' << H << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  s << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s << "<text x=\"" << W / 2 << "\" y=\"18\" text-anchor=\"middle\" font-size=\"13\">Frontier: state memory saved vs "
       "final val loss minus fp32</text>\n";
  // Tolerance band: everything at or below the line is accepted.
  s << "<rect x=\"" << left << "\" y=\"" << Y(a.tolerance) << "\" width=\"" << W - left - right << "\" height=\""
    << Y(yLo) - Y(a.tolerance) << "\" fill=\"#e8f5e9\"/>\n";
  s << "<line x1=\"" << left << "\" x2=\"" << W - right << "\" y1=\"" << Y(a.tolerance) << "\" y2=\"" << Y(a.tolerance)
    << "\" stroke=\"#2e7d32\" stroke-dasharray=\"4 3\"/>\n";
  s << "<text x=\"" << W - right - 4 << "\" y=\"" << Y(a.tolerance) - 4
    << "\" text-anchor=\"end\" fill=\"#2e7d32\">tolerance " << fixedOrDash(a.tolerance, 4) << " nats</text>\n";
  for (double t : report::niceTicks(yLo, yHi, 6)) {
    s << "<line x1=\"" << left << "\" x2=\"" << W - right << "\" y1=\"" << Y(t) << "\" y2=\"" << Y(t)
      << "\" stroke=\"#ddd\"/>\n";
    s << "<text x=\"" << left - 6 << "\" y=\"" << Y(t) + 4 << "\" text-anchor=\"end\">" << report::num(t, 3)
      << "</text>\n";
  }
  for (double t : report::niceTicks(xLo, xHi, 6))
    s << "<text x=\"" << X(t) << "\" y=\"" << H - bottom + 16 << "\" text-anchor=\"middle\">" << report::num(100 * t, 3)
      << " %</text>\n";
  s << "<line x1=\"" << left << "\" x2=\"" << W - right << "\" y1=\"" << Y(0) << "\" y2=\"" << Y(0)
    << "\" stroke=\"#555\"/>\n";
  s << "<text x=\"" << (left + W - right) / 2 << "\" y=\"" << H - 10
    << "\" text-anchor=\"middle\">state memory saved vs fp32 (weights, gradients, optimizer state)</text>\n";
  s << "<text transform=\"translate(16 " << (top + H - bottom) / 2
    << ") rotate(-90)\" text-anchor=\"middle\">val loss − fp32 (nats)</text>\n";
  // fp32 itself: the origin.
  s << "<circle cx=\"" << X(0) << "\" cy=\"" << Y(0) << "\" r=\"4\" fill=\"#555\"/><text x=\"" << X(0) + 6 << "\" y=\""
    << Y(0) - 6 << "\">fp32</text>\n";
  for (size_t i = 0; i < a.candidates.size(); ++i) {
    const AdvisorCandidate& c = a.candidates[i];
    if (!c.lossVsFp32 || !std::isfinite(*c.lossVsFp32)) continue;
    const bool chosen = static_cast<int>(i) == a.chosen;
    const double x = X(c.memorySaved), y = Y(*c.lossVsFp32);
    const char* color = report::seriesColor(i);
    s << "<line x1=\"" << x << "\" x2=\"" << x << "\" y1=\"" << Y(c.ciLow) << "\" y2=\"" << Y(c.ciHigh)
      << "\" stroke=\"" << color << "\"/>\n";
    s << "<circle cx=\"" << x << "\" cy=\"" << y << "\" r=\"" << (chosen ? 7 : 4.5) << "\" fill=\"" << color << "\""
      << (chosen ? " stroke=\"black\" stroke-width=\"2\"" : "") << "><title>" << escapeXml(c.name) << "</title></circle>\n";
    // Labels right of points on the left half, left of those on the right half.
    const bool leftOfPoint = x > W / 2;
    s << "<text x=\"" << (leftOfPoint ? x - 9 : x + 9) << "\" y=\"" << y + 4 + 12.0 * double(i % 2) << "\""
      << (leftOfPoint ? " text-anchor=\"end\"" : "") << ">" << (chosen ? "★ " : "")
      << escapeXml(c.name) << "</text>\n";
  }
  s << "</svg>\n";
  return s.str();
}

// The quantized moment stores: whether each entered the chosen plan, and why.
std::string momentStoresSectionHtml(const Advice& a) {
  if (a.momentStores.empty()) return "";
  std::ostringstream h;
  h << "<h2>Moment stores</h2>\n<p>Each quantized store (torchao's 8bit, 4bit, fp8: codes and an fp32 scale per "
       "block, both counted in the state bytes: as its first run allocated them, or the module-tree estimate for a store "
       "not run) put run-wide on the plan the candidates gave, cheapest first, and "
       "confirmed like the candidates (paired against fp32 over the seeds); then a store over the tolerance "
       "run-wide on the half of its layers whose moment error (m's + half v's) its runs measured smallest, the "
       "plan's own moments elsewhere, confirmed the same way. A store enters the plan only when its "
       "gap is within the tolerance. Moment error: the relative error of the stored m and v against the fp32 moment "
       "each step computed, mean over the windows and seeds.</p>\n<table><tr><th>store</th><th>layers</th><th>in the plan</th>"
       "<th>state bytes</th><th>memory saved</th><th>loss − fp32</th><th>95 % CI</th><th>moment error m / v</th>"
       "<th>why</th></tr>\n";
  for (const MomentStoreVerdict& v : a.momentStores) {
    std::string layers;
    for (const std::string& l : v.layers) layers += (layers.empty() ? "" : ", ") + l;
    h << "<tr" << (v.inPlan ? " class=\"chosen\"" : "") << "><td>" << momentPrecisionId(v.store) << "</td><td class=\"text\">"
      << (v.layers.empty() ? std::string("every layer") : escapeXml(std::to_string(v.layers.size()) + ": " + layers))
      << "</td><td>" << (v.inPlan ? "yes" : "no") << "</td><td>" << (v.stateBytes > 0 ? std::to_string(v.stateBytes) : "–")
      << (v.stateBytes > 0 && !v.confirmed ? " (estimate)" : "") << "</td><td>"
      << (v.stateBytes > 0 ? pct(v.memorySaved) : "–") << "</td><td>"
      << (v.lossVsFp32 ? signedFixed(*v.lossVsFp32, 4) : "–") << "</td><td>"
      << (v.lossVsFp32 ? signedFixed(v.ciLow, 4) + " to " + signedFixed(v.ciHigh, 4) : "–") << "</td><td>"
      << (v.momentErrorM ? pct(*v.momentErrorM, 2) : "–") << " / " << (v.momentErrorV ? pct(*v.momentErrorV, 2) : "–")
      << "</td><td>" << escapeXml(v.reason) << "</td></tr>\n";
  }
  h << "</table>\n";
  return h.str();
}

// The GEMM formats: each tried on the chosen plan, and what each does to
// every layer's input and weight in the shadow run.
std::string gemmSectionHtml(const Advice& a) {
  if (a.gemmCandidates.empty() && a.gemmLayers.empty()) return "";
  std::ostringstream h;
  h << "<h2>GEMM formats</h2>\n<p>Every matrix product of the chosen plan in one simulated format (fake "
       "quantization, LibTorch's bf16 or fp32 products; not run on fp8/fp4 tensor cores), confirmed like the "
       "candidates. The state "
       "memory is the chosen plan's: a format changes the products, not what is stored. The format with the fewest "
       "bits per element within the tolerance is marked";
  if (a.gemmChosen >= 0) h << " (plan-gemm.json runs it)";
  h << ".</p>\n<table><tr><th>plan</th><th>GEMM format</th><th>val loss per seed</th><th>loss − fp32</th>"
       "<th>95 % CI</th><th>verdict</th></tr>\n";
  for (size_t i = 0; i < a.gemmCandidates.size(); ++i) {
    const AdvisorCandidate& c = a.gemmCandidates[i];
    const bool chosen = static_cast<int>(i) == a.gemmChosen;
    h << "<tr" << (chosen ? " class=\"chosen\"" : "") << "><td>" << escapeXml(c.name) << "</td><td>"
      << gemmFormatId(c.config.plan.gemm_format) << "</td><td>";
    for (size_t k = 0; k < c.valLoss.size(); ++k) h << (k ? " " : "") << fixedOrDash(c.valLoss[k], 4);
    h << "</td><td>" << (c.lossVsFp32 ? signedFixed(*c.lossVsFp32, 4) : "–") << "</td><td>"
      << (c.lossVsFp32 ? signedFixed(c.ciLow, 4) + " to " + signedFixed(c.ciHigh, 4) : "–") << "</td><td>"
      << (chosen ? "chosen" : escapeXml(c.rejected)) << "</td></tr>\n";
  }
  h << "</table>\n<p>In shadow, during the fp32 run: each layer's input and weight quantized in each format on step 1 and "
       "every second window (means): relative error ‖Q(x) − x‖ / ‖x‖, underflow (non-zero elements that quantize to "
       "zero) and saturation. The output gradient is not shadowed.</p>\n<table><tr><th>layer</th><th>format</th>"
       "<th>input rel. error</th><th>input underflow</th><th>weight rel. error</th><th>weight underflow</th>"
       "<th>saturation (in / w)</th></tr>\n";
  for (size_t i = 0; i < a.gemmLayers.size(); ++i) {
    const LayerGemmShadow& in = a.gemmLayers[i];
    if (in.role != GemmRole::Input) continue;
    const LayerGemmShadow* w = nullptr;
    for (const LayerGemmShadow& g : a.gemmLayers)
      if (g.role == GemmRole::Weight && g.layer == in.layer && g.format == in.format) w = &g;
    h << "<tr><td>" << escapeXml(in.layer) << "</td><td>" << gemmFormatId(in.format) << "</td><td>"
      << pct(in.relError, 2) << "</td><td>" << pct(in.underflow, 2) << "</td><td>" << (w ? pct(w->relError, 2) : "–")
      << "</td><td>" << (w ? pct(w->underflow, 2) : "–") << "</td><td>" << pct(in.saturation, 2) << " / "
      << (w ? pct(w->saturation, 2) : "–") << "</td></tr>\n";
  }
  h << "</table>\n";
  return h.str();
}

std::string adviceReportHtml(const Advice& a) {
  std::ostringstream h;
  h << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Precision advice</title><style>"
       "body{font-family:sans-serif;max-width:1100px;margin:2em auto;}table{border-collapse:collapse;margin:1em 0;}"
       "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right;}td:first-child,th:first-child{text-align:left;}"
       "tr.chosen{background:#e8f5e9;font-weight:bold;}.risk{color:#b71c1c;}</style></head><body>\n";
  h << "<h1>Precision advice</h1>\n";
  if (a.chosen >= 0) {
    const AdvisorCandidate& c = a.candidates[static_cast<size_t>(a.chosen)];
    h << "<p><b>Chosen: " << escapeXml(c.name) << "</b> (" << escapeXml(c.description) << "): saves "
      << pct(c.memorySaved) << " of fp32's training-state bytes, final validation loss "
      << signedFixed(*c.lossVsFp32, 4) << " nats vs fp32 (95 % CI " << signedFixed(c.ciLow, 4) << " to "
      << signedFixed(c.ciHigh, 4) << ", paired over " << a.seeds.size() << " seed(s)). plan.json runs it.</p>\n";
  } else {
    h << "<p><b>No candidate within tolerance.</b> " << escapeXml(a.message) << "</p>\n";
  }
  h << "<p>Tolerance " << fixedOrDash(a.tolerance, 4) << " nats (" << escapeXml(a.toleranceSource) << "). "
    << a.steps << " steps per run, seeds";
  for (uint64_t s : a.seeds) h << ' ' << s;
  h << "; fp32 final val loss";
  for (double v : a.fp32ValLoss) h << ' ' << fixedOrDash(v, 4);
  h << " (spread " << fixedOrDash(a.fp32Spread, 5) << "). " << fixedOrDash(a.seconds, 0) << " s in all";
  if (a.shadowOverhead)
    h << "; the shadow's own work cost " << pct(*a.shadowOverhead)
      << " of CPU time on top of its fp32 run's steps (measured inside each step)";
  h << ".</p>\n";
  if (!a.completed) h << "<p class=\"risk\">Not completed: " << escapeXml(a.message) << "</p>\n";

  h << "<h2>Frontier</h2>\n" << frontierSvg(a);
  h << "<h2>Candidates and confirmation runs</h2>\n<table><tr><th>plan</th><th>mode</th><th>fp32 layers</th><th>own recipe</th>"
       "<th>moments</th><th>state bytes</th><th>memory saved</th><th>measured peak (MiB)</th><th>update lost (predicted)</th><th>val loss per seed</th><th>loss − fp32</th><th>95 % CI</th>"
       "<th>update lost (measured)</th><th>compute</th><th>verdict</th></tr>\n";
  for (size_t i = 0; i < a.candidates.size(); ++i) {
    const AdvisorCandidate& c = a.candidates[i];
    const bool chosen = static_cast<int>(i) == a.chosen;
    h << "<tr" << (chosen ? " class=\"chosen\"" : "") << "><td>" << escapeXml(c.name) << "</td><td>"
      << optimizerModeId(c.config.mode) << "</td><td>";
    for (size_t k = 0; k < c.fp32Layers.size(); ++k) h << (k ? "<br>" : "") << escapeXml(c.fp32Layers[k]);
    h << "</td><td>";
    bool first = true;
    for (const auto& [layer, recipe] : c.layerRecipes) {
      h << (first ? "" : "<br>") << escapeXml(layer) << ": " << optimizerModeId(recipe);
      first = false;
    }
    std::string moments = momentPrecisionId(c.config.adamw.moments);
    if (!c.config.plan.moments.empty())
      moments += "; " + momentPrecisionId(c.config.plan.moments.begin()->second) + " on " +
                 std::to_string(c.config.plan.moments.size()) + " layers";
    h << "</td><td>" << escapeXml(moments) << "</td><td>" << c.stateBytes << "</td><td>" << pct(c.memorySaved) << "</td><td>"
      << (c.trainingPeakBytes ? fixedOrDash(double(*c.trainingPeakBytes) / (1024.0 * 1024.0), 2) : "–") << "</td><td>"
      << (c.predictedUpdateLost ? pct(*c.predictedUpdateLost) : "–") << "</td><td>";
    for (size_t k = 0; k < c.valLoss.size(); ++k) h << (k ? " " : "") << fixedOrDash(c.valLoss[k], 4);
    h << "</td><td>" << (c.lossVsFp32 ? signedFixed(*c.lossVsFp32, 4) : "–") << "</td><td>"
      << (c.lossVsFp32 ? signedFixed(c.ciLow, 4) + " to " + signedFixed(c.ciHigh, 4) : "–") << "</td><td>"
      << (c.measuredUpdateLost ? lostCell(*c.measuredUpdateLost, c.measuredUpdateLostSe.value_or(NAN)) : "–")
      << "</td><td>" << escapeXml(computeCostText(c)) << "</td><td>"
      << (chosen ? "chosen" : escapeXml(c.rejected)) << "</td></tr>\n";
  }
  h << "</table>\n" << momentStoresSectionHtml(a);
  h << "<h2>Shadow figures per layer</h2>\n<p>Measured during the fp32 run (seed " << (a.seeds.empty() ? 0 : a.seeds[0])
    << "): the share of each layer's intended update that a bf16 write would lose (\"update lost\", mean over the "
       "windows ± its standard error), on sampled elements, and the share of intended updates below half a bf16 ulp "
       "of the weight.</p>\n<table><tr><th>layer</th><th>elements</th><th>nearest</th><th>stochastic</th>"
       "<th>Kahan</th><th>below ½ ulp</th></tr>\n";
  for (const LayerShadowFigures& l : a.layers)
    h << "<tr><td>" << escapeXml(l.layer) << "</td><td>" << l.elements << "</td><td>"
      << lostCell(l.lostNearest, l.lostNearestSe) << "</td><td>" << lostCell(l.lostStochastic, l.lostStochasticSe)
      << "</td><td>" << lostCell(l.lostKahan, l.lostKahanSe) << "</td><td>" << pct(l.belowHalfUlp) << "</td></tr>\n";
  h << "</table>\n" << gemmSectionHtml(a) << "</body></html>\n";
  return h.str();
}

void writeAdviceFiles(const std::filesystem::path& dir, const Advice& advice, const RunConfig& base) {
  std::filesystem::create_directories(dir);
  writeJsonFileAtomically(dir / "advice.json", adviceToJson(advice));
  RunConfig plan = base;
  if (advice.chosen >= 0) {
    plan = advice.candidates[static_cast<size_t>(advice.chosen)].config;
  } else {
    plan.mode = OptimizerMode::Fp32AdamW;
  }
  plan.output_dir.clear();
  plan.shadow_recipes = false;
  plan.shadow_gemm_formats.clear();
  writeJsonFileAtomically(dir / "plan.json", plan.toJson());
  if (advice.gemmChosen >= 0) {  // the chosen plan with the narrowest GEMM format within tolerance
    RunConfig gemm = advice.gemmCandidates[static_cast<size_t>(advice.gemmChosen)].config;
    gemm.output_dir.clear();
    gemm.shadow_recipes = false;
    gemm.shadow_gemm_formats.clear();
    writeJsonFileAtomically(dir / "plan-gemm.json", gemm.toJson());
  }
  writeFileAtomically(dir / "frontier.svg", frontierSvg(advice));
  writeFileAtomically(dir / "report.html", adviceReportHtml(advice));
}

}  // namespace plab
