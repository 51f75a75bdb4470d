#include "report/report_charts.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "precision/update_stats.h"
#include "report/fp32_comparison.h"
#include "report/fp32_twin.h"
#include "report/mode_colors.h"
#include "report/number_text.h"
#include "report/report_header.h"
#include "report/run_order.h"
#include "report/svg_util.h"

namespace plab::report {

namespace {

// The run's label (a repeated name gets " (2)"), then its mode.
std::string seriesLabel(const std::vector<RunRecord>& runs, size_t i) {
  return runLabel(runs, i) + " (" + optimizerModeId(runs[i].config.mode) + ")";
}

ChartSeries emptySeries(const std::string& label, const RunStyle& style) {
  ChartSeries s;
  s.label = label;
  s.color = hexColor(style.color);
  s.dashes = repeatDashPattern(style.repeat);
  return s;
}

ChartSeries seriesOf(const RunRecord& r, const std::string& label, const RunStyle& style,
                     double (*pick)(const StepMetrics&)) {
  ChartSeries s = emptySeries(label, style);
  for (const StepMetrics& m : r.steps) {
    s.x.push_back(static_cast<double>(m.step));
    s.y.push_back(pick(m));
  }
  return s;
}

double mibOf(int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

}  // namespace

std::string safeFileName(const std::string& name) {
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
  if (out.empty() || out == "." || out == "..") out = "run";
  return out;
}

std::string renderMemoryChart(const std::vector<RunRecord>& runs) {
  struct Bar {
    std::string label;
    MemoryBreakdown m;
  };
  std::vector<Bar> bars;
  if (!runs.empty()) bars.push_back({"fp32 AdamW baseline", headerFp32Baseline(runs)});
  for (size_t i = 0; i < runs.size(); ++i) bars.push_back({seriesLabel(runs, i), runs[i].result.memory});
  const char* parts[] = {"weights", "gradients", "moments", "master", "kahan", "scales"};
  const char* colors[] = {"#0072B2", "#56B4E9", "#E69F00", "#D55E00", "#009E73", "#CC79A7"};
  // The scales' legend entry only where a run quantizes its moments.
  const int shownParts =
      std::any_of(bars.begin(), bars.end(), [](const Bar& b) { return b.m.scales > 0; }) ? 6 : 5;

  double maxTotal = 0;
  for (const Bar& b : bars) maxTotal = std::max(maxTotal, mibOf(b.m.total()));
  if (maxTotal <= 0) maxTotal = 1;
  const double width = 720, left = 230, right = 40, top = 36, barH = 22, gap = 10;
  const double plotW = width - left - right;
  const double height = top + static_cast<double>(bars.size()) * (barH + gap) + 60;

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << width << ' ' << height << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  svg << "<title>Training-state memory</title>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg << "<text x=\"" << width / 2
      << "\" y=\"20\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\">Training-state memory (MiB)</text>\n";
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    const double y = top + static_cast<double>(i) * (barH + gap);
    svg << "<text x=\"" << left - 8 << "\" y=\"" << y + barH / 2 + 4 << "\" text-anchor=\"end\">" << escapeXml(b.label)
        << "</text>\n";
    const int64_t values[] = {b.m.weights, b.m.gradients, b.m.moments, b.m.master, b.m.kahan, b.m.scales};
    double x = left;
    for (int p = 0; p < 6; ++p) {
      const double w = mibOf(values[p]) / maxTotal * plotW;
      if (w <= 0) continue;
      svg << "<rect x=\"" << num(x, 6) << "\" y=\"" << y << "\" width=\"" << num(w, 6) << "\" height=\"" << barH
          << "\" fill=\"" << colors[p] << "\"><title>" << parts[p] << ": " << num(mibOf(values[p])) << " MiB</title></rect>\n";
      x += w;
    }
    svg << "<text x=\"" << num(x + 4, 6) << "\" y=\"" << y + barH / 2 + 4 << "\">" << num(mibOf(b.m.total())) << "</text>\n";
  }
  const double ly = top + static_cast<double>(bars.size()) * (barH + gap) + 20;
  for (int p = 0; p < shownParts; ++p) {
    const double lx = left + p * 80.0;
    svg << "<rect x=\"" << lx << "\" y=\"" << ly - 9 << "\" width=\"12\" height=\"12\" fill=\"" << colors[p] << "\"/>"
        << "<text x=\"" << lx + 16 << "\" y=\"" << ly + 1 << "\">" << parts[p] << "</text>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

const std::vector<HeatmapStop>& heatmapScale() {
  static const std::vector<HeatmapStop> stops = {{0.0, {255, 247, 188}},
                                                 {0.25, {254, 196, 79}},
                                                 {0.5, {245, 90, 20}},
                                                 {0.75, {180, 10, 0}},
                                                 {1.0, {50, 0, 0}}};
  return stops;
}

Rgb heatmapColor(double fraction) {
  const auto& stops = heatmapScale();
  const double f = std::isfinite(fraction) ? std::clamp(fraction, 0.0, 1.0) : 0.0;
  for (size_t i = 1; i < stops.size(); ++i) {
    if (f > stops[i].at) continue;
    const double t = (f - stops[i - 1].at) / (stops[i].at - stops[i - 1].at);
    const auto mix = [t](int a, int b) { return static_cast<int>(std::lround(a + t * (b - a))); };
    const Rgb& a = stops[i - 1].color;
    const Rgb& b = stops[i].color;
    return {mix(a.r, b.r), mix(a.g, b.g), mix(a.b, b.b)};
  }
  return stops.back().color;
}

namespace {

// One layer's figure at one step: its value and whether it is evidence.
struct LayerValue {
  const std::string* layer;
  double value;
  bool evidence;
};

std::vector<LayerValue> layerValuesOf(const StepMetrics& m, LayerMetric metric) {
  std::vector<LayerValue> out;
  switch (metric) {
    case LayerMetric::UpdateLost:
      for (const LayerWindowMetrics& w : m.windowLayers) {
        const std::optional<double> se = w.updateLostStdError && std::isfinite(*w.updateLostStdError)
                                             ? w.updateLostStdError
                                             : (w.updateLostStdError ? std::optional<double>(INFINITY) : std::nullopt);
        out.push_back({&w.layer, w.updateLost, lostEvidence(se, w.elements.value_or(0)).enough});
      }
      break;
    case LayerMetric::RoundedAway:
      for (const LayerStepMetrics& l : m.layers) out.push_back({&l.layer, l.roundedAwayFraction, true});
      break;
    case LayerMetric::Fp16GradFlush:
      for (const LayerFp16GradMetrics& l : m.fp16GradLayers)
        if (l.flushShare) out.push_back({&l.layer, *l.flushShare, true});
      break;
    case LayerMetric::MomentErrorM:
    case LayerMetric::MomentErrorV:
      for (const LayerWindowMetrics& w : m.windowLayers) {
        const std::optional<double>& e = metric == LayerMetric::MomentErrorM ? w.momentErrorM : w.momentErrorV;
        if (e) out.push_back({&w.layer, *e, true});
      }
      break;
    case LayerMetric::GemmSaturation: {
      std::map<std::string, size_t> index;  // a layer's operands are not listed together (backward runs last)
      for (const GemmOperandStats& g : m.gemmLayers) {
        auto [it, added] = index.emplace(g.layer, out.size());
        if (added) out.push_back({&g.layer, g.saturation, true});
        else out[it->second].value = std::max(out[it->second].value, g.saturation);
      }
      break;
    }
    default: {
      const GemmRole role = metric == LayerMetric::GemmUnderflowInput    ? GemmRole::Input
                            : metric == LayerMetric::GemmUnderflowWeight ? GemmRole::Weight
                                                                         : GemmRole::GradOutput;
      for (const GemmOperandStats& g : m.gemmLayers)
        if (g.role == role) out.push_back({&g.layer, g.underflow, true});
      break;
    }
  }
  return out;
}

const char* layerMetricTitle(LayerMetric metric) {
  switch (metric) {
    case LayerMetric::UpdateLost: return "Update lost per layer (windows)";
    case LayerMetric::RoundedAway: return "Rounded away per layer (single steps)";
    case LayerMetric::Fp16GradFlush: return "fp16 gradients flushed to zero per layer";
    case LayerMetric::GemmUnderflowInput: return "GEMM underflow per layer (input)";
    case LayerMetric::GemmUnderflowWeight: return "GEMM underflow per layer (weight)";
    case LayerMetric::GemmUnderflowGradOutput: return "GEMM underflow per layer (output gradient)";
    case LayerMetric::GemmSaturation: return "GEMM saturation per layer (most saturated operand)";
    case LayerMetric::MomentErrorM: return "First moment (m) error per layer (windows)";
    case LayerMetric::MomentErrorV: return "Second moment (v) error per layer (windows)";
  }
  return "";
}

const char* layerMetricScale(LayerMetric metric) {
  switch (metric) {
    case LayerMetric::UpdateLost: return "of the summed intended update lost; grey: no evidence";
    case LayerMetric::RoundedAway: return "of non-zero updates rounded away";
    case LayerMetric::Fp16GradFlush: return "of the non-zero unscaled gradient elements fp16 would flush to zero";
    case LayerMetric::GemmSaturation: return "of the operand's elements clamped at the format's largest value";
    case LayerMetric::MomentErrorM:
    case LayerMetric::MomentErrorV:
      return "||stored - exact|| / ||exact|| of the quantized moment, exact: the step's fp32 moment";
    default: return "of the operand's non-zero elements quantized to zero";
  }
}

}  // namespace

bool runHasLayerMetric(const RunRecord& run, LayerMetric metric) {
  return std::any_of(run.steps.begin(), run.steps.end(),
                     [metric](const StepMetrics& m) { return !layerValuesOf(m, metric).empty(); });
}

std::string renderLayerHeatmap(const RunRecord& run, LayerMetric metric, int maxBuckets) {
  using Value = LayerValue;
  const auto valuesOf = [metric](const StepMetrics& m) { return layerValuesOf(m, metric); };
  // Layer order: the run's layer list, then any layer only seen in stats.
  std::vector<std::string> layers = run.info.layers;
  std::map<std::string, size_t> row;
  for (size_t i = 0; i < layers.size(); ++i) row[layers[i]] = i;
  int64_t lastStep = 0;
  for (const StepMetrics& m : run.steps) {
    const std::vector<Value> values = valuesOf(m);
    if (values.empty()) continue;
    lastStep = std::max(lastStep, m.step);
    for (const Value& v : values)
      if (!row.count(*v.layer)) {
        row[*v.layer] = layers.size();
        layers.push_back(*v.layer);
      }
  }
  const int buckets = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(maxBuckets, lastStep)));
  std::vector<std::vector<double>> sum(layers.size(), std::vector<double>(buckets, 0.0));
  std::vector<std::vector<int>> count(layers.size(), std::vector<int>(buckets, 0)), noise = count;
  for (const StepMetrics& m : run.steps)
    for (const Value& v : valuesOf(m)) {
      // Steps count from 1; a record outside 1..lastStep (a hostile file)
      // has no bucket, and the product is taken in double so that a step
      // near 2^63 cannot overflow into a negative index.
      if (!std::isfinite(v.value) || m.step < 1 || m.step > lastStep) continue;
      const double at = double(m.step - 1) / double(lastStep) * buckets;
      const int b = std::clamp(static_cast<int>(at), 0, buckets - 1);
      const size_t r = row[*v.layer];
      if (!v.evidence) {
        noise[r][b] += 1;
        continue;
      }
      sum[r][b] += v.value;
      count[r][b] += 1;
    }

  const double cellW = std::max(4.0, 440.0 / buckets), cellH = 12;
  const double left = 250, top = 40;
  const double width = left + cellW * buckets + 90;
  const double height = top + cellH * static_cast<double>(std::max<size_t>(1, layers.size())) + 66;
  const std::string what = layerMetricTitle(metric);
  const std::string title = what + ": " + run.config.name;
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width, 6) << "\" height=\"" << num(height, 6)
      << "\" viewBox=\"0 0 " << num(width, 6) << ' ' << num(height, 6)
      << "\" font-family=\"sans-serif\" font-size=\"10\">\n";
  svg << "<title>" << escapeXml(title) << "</title>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  // Not measured: hatched, never the colour of 0 %.
  svg << "<defs><pattern id=\"notMeasured\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
         "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"white\"/>"
         "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#c8c8c8\" stroke-width=\"2\"/></pattern></defs>\n";
  svg << "<text x=\"" << num(width / 2, 6) << "\" y=\"20\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\">"
      << escapeXml(title) << "</text>\n";
  if (lastStep == 0)
    svg << "<text x=\"" << left << "\" y=\"" << top + 10 << "\" fill=\"#888\">no per-layer statistics</text>\n";
  else
    svg << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << num(cellW * buckets, 6) << "\" height=\""
        << num(cellH * static_cast<double>(layers.size()), 6) << "\" fill=\"url(#notMeasured)\"/>\n";
  for (size_t r = 0; r < layers.size(); ++r) {
    const double y = top + cellH * static_cast<double>(r);
    svg << "<text x=\"" << left - 6 << "\" y=\"" << y + cellH - 2 << "\" text-anchor=\"end\">" << escapeXml(layers[r])
        << "</text>\n";
    for (int b = 0; b < buckets; ++b) {
      const double x = left + cellW * b;
      const auto cell = [&](const std::string& fill, const std::string& tip) {
        svg << "<rect x=\"" << num(x, 6) << "\" y=\"" << y << "\" width=\"" << num(cellW, 6) << "\" height=\"" << cellH
            << "\" fill=\"" << fill << "\"><title>" << escapeXml(layers[r]) << ": " << escapeXml(tip)
            << "</title></rect>\n";
      };
      if (count[r][b] > 0) {
        const double v = sum[r][b] / count[r][b];
        cell(hexColor(heatmapColor(v)), percentText(v, 1));
      } else if (noise[r][b] > 0) {
        cell("#aaaaaa", "no evidence (noise at this layer's size)");
      }
    }
  }
  const double axisY = top + cellH * static_cast<double>(layers.size()) + 14;
  svg << "<text x=\"" << left << "\" y=\"" << axisY << "\">step 1</text>\n";
  svg << "<text x=\"" << num(left + cellW * buckets, 6) << "\" y=\"" << axisY << "\" text-anchor=\"end\">step "
      << lastStep << "</text>\n";
  // The scale, as the cells draw it.
  const double scaleW = std::min(200.0, cellW * buckets);
  for (int i = 0; i < 20; ++i)
    svg << "<rect x=\"" << num(left + scaleW * i / 20, 6) << "\" y=\"" << axisY + 8 << "\" width=\"" << num(scaleW / 20 + 0.5, 6)
        << "\" height=\"8\" fill=\"" << hexColor(heatmapColor((i + 0.5) / 20)) << "\"/>\n";
  svg << "<text x=\"" << num(left + scaleW + 6, 6) << "\" y=\"" << axisY + 16 << "\">0 % .. 100 % "
      << layerMetricScale(metric) << "; hatched: not measured</text>\n";
  svg << "</svg>\n";
  return svg.str();
}

std::vector<SvgChart> renderReportCharts(const std::vector<RunRecord>& runs) {
  std::vector<ChartSeries> loss, val, rounded, lost, difference;
  // The desktop app's styles: one colour per optimizer mode, a line style
  // per later run of a mode.
  const std::vector<RunStyle> styles = runStyles(runs);
  const std::vector<std::optional<size_t>> twins = fp32TwinIndices(runs);  // once: relating the runs is O(n)
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunRecord& r = runs[i];
    const std::string label = seriesLabel(runs, i);
    loss.push_back(seriesOf(r, label, styles[i], [](const StepMetrics& m) { return m.loss; }));
    // Only the steps that measured a statistic give a point: no flat repeats.
    ChartSeries v = emptySeries(label, styles[i]), u = v, ra = v;
    for (const StepMetrics& m : r.steps) {
      if (m.valLoss) {
        v.x.push_back(static_cast<double>(m.step));
        v.y.push_back(*m.valLoss);
      }
      if (m.updateLost) {
        u.x.push_back(static_cast<double>(m.step));
        u.y.push_back(100.0 * *m.updateLost);
      }
      if (m.roundedAwayFraction) {
        ra.x.push_back(static_cast<double>(m.step));
        ra.y.push_back(100.0 * *m.roundedAwayFraction);
      }
    }
    val.push_back(v);
    lost.push_back(u);
    rounded.push_back(ra);
    const auto ref = twins[i];
    if (ref && *ref != i) {
      const LossDifference d = lossDifference(r, runs[*ref]);
      ChartSeries s = emptySeries(label, styles[i]);
      s.x = d.steps;
      s.y = d.train;
      difference.push_back(s);
    }
  }
  std::vector<SvgChart> charts = {
      {"loss.svg", "Train loss", renderSvgLineChart("Train loss", "step", "loss", loss)},
      {"val_loss.svg", "Validation loss", renderSvgLineChart("Validation loss", "step", "loss", val)},
  };
  if (!difference.empty())
    charts.push_back({"loss_vs_fp32.svg", "Train loss minus fp32's at the same step",
                      renderSvgLineChart("Train loss minus fp32's at the same step", "step", "nats", difference)});
  charts.push_back({"update_lost.svg", "Update lost (windowed)",
                    renderSvgLineChart("Update lost: share of the intended update that did not reach the weights",
                                       "step", "% of the summed intended update", lost)});
  charts.push_back({"rounded_away.svg", "Updates rounded away (per step)",
                    renderSvgLineChart("Updates rounded away in a single step", "step", "% of non-zero updates",
                                       rounded)});
  charts.push_back({"memory.svg", "Training-state memory", renderMemoryChart(runs)});
  // One file per run, never two runs in one (two runs named alike).
  const std::vector<std::string> stems = uniqueFileStems(runs);
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string file = runs.size() == 1 ? "layers_heatmap.svg" : "layers_heatmap_" + stems[i] + ".svg";
    charts.push_back({file, "Rounded away per layer: " + runLabel(runs, i), renderLayerHeatmap(runs[i], LayerMetric::RoundedAway)});
  }
  // Both metrics, each titled (the app shows one at a time).
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string file = runs.size() == 1 ? "layers_update_lost.svg" : "layers_update_lost_" + stems[i] + ".svg";
    charts.push_back({file, "Update lost per layer: " + runLabel(runs, i), renderLayerHeatmap(runs[i], LayerMetric::UpdateLost)});
  }
  // The fp16 and GEMM-format statistics, for the runs that measured them.
  struct Extra {
    LayerMetric metric;
    const char* stem;
  };
  const Extra extras[] = {{LayerMetric::Fp16GradFlush, "layers_fp16_flush"},
                          {LayerMetric::GemmUnderflowInput, "layers_gemm_underflow_input"},
                          {LayerMetric::GemmUnderflowWeight, "layers_gemm_underflow_weight"},
                          {LayerMetric::GemmUnderflowGradOutput, "layers_gemm_underflow_grad_output"},
                          {LayerMetric::GemmSaturation, "layers_gemm_saturation"},
                          {LayerMetric::MomentErrorM, "layers_moment_error_m"},
                          {LayerMetric::MomentErrorV, "layers_moment_error_v"}};
  for (const Extra& e : extras)
    for (size_t i = 0; i < runs.size(); ++i)
      if (runHasLayerMetric(runs[i], e.metric))
        charts.push_back({std::string(e.stem) + (runs.size() == 1 ? "" : "_" + stems[i]) + ".svg",
                          std::string(layerMetricTitle(e.metric)) + ": " + runLabel(runs, i),
                          renderLayerHeatmap(runs[i], e.metric)});
  // fp16-mixed's loss scale (log2), with its skipped steps.
  std::vector<ChartSeries> scale;
  for (size_t i = 0; i < runs.size(); ++i) {
    ChartSeries sc = emptySeries(seriesLabel(runs, i), styles[i]);
    for (const StepMetrics& m : runs[i].steps)
      if (m.lossScale && *m.lossScale > 0) {
        sc.x.push_back(static_cast<double>(m.step));
        sc.y.push_back(std::log2(*m.lossScale));
      }
    if (!sc.x.empty()) scale.push_back(sc);
  }
  if (!scale.empty())
    charts.push_back({"loss_scale.svg", "Loss scale (fp16-mixed, log2; it halves on each skipped step)",
                      renderSvgLineChart("Loss scale (log2): x2 after clean intervals, x0.5 on a skipped step", "step",
                                         "log2 of the loss scale", scale)});
  return charts;
}

}  // namespace plab::report
