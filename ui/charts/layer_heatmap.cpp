#include "charts/layer_heatmap.h"

#include <QHash>
#include <algorithm>
#include <map>
#include <optional>
#include <cmath>
#include <limits>

#include "precision/update_stats.h"
#include "report/fp32_twin.h"
#include "report/report_charts.h"

namespace plab::ui {
namespace {

// "transformer.h.0.attn.c_attn" -> "h.0.attn.c_attn": the tick labels need room.
QString shortLayerName(const std::string& path) {
  QString s = QString::fromStdString(path);
  for (const char* prefix : {"transformer.", "model."})
    if (s.startsWith(prefix)) s = s.mid(static_cast<int>(qstrlen(prefix)));
  return s;
}

QString metricExplanation(HeatmapMetric m) {
  const QString scale = "\npale yellow: 0 %; hatched: not measured (no window or statistics step there)";
  switch (m) {
    case HeatmapMetric::UpdateLost:
      return "grey: no evidence (the figure's ± is above 5 points, e.g. a small norm layer\n"
             "under stochastic rounding); hover a cell for its figure, ± and reason" + scale;
    case HeatmapMetric::RoundedAway:
      return "share of non-zero updates a single step left unchanged; hover a cell for its figure" + scale;
    case HeatmapMetric::Fp16GradFlush:
      return "fp16-mixed: share of the unscaled gradient's non-zero elements that fp16 would flush to zero\n"
             "(what training without loss scaling would lose)" + scale;
    case HeatmapMetric::Fp16GradZero:
      return "fp16 modes: share of the gradient's elements that are zero as autograd hands them over in fp16\n"
             "(zeros fp32 would also have, e.g. unused embedding rows, included)" + scale;
    case HeatmapMetric::GemmUnderflowInput:
    case HeatmapMetric::GemmUnderflowWeight:
    case HeatmapMetric::GemmUnderflowGradOutput:
      return "low-precision GEMMs: share of the operand's non-zero elements that quantize to zero\n"
             "(simulated formats); hover a cell for every statistic of the operand" + scale;
    case HeatmapMetric::GemmSaturation:
      return "low-precision GEMMs: share of elements clamped at the format's largest value,\n"
             "the layer's most saturated operand; hover a cell for every operand" + scale;
    case HeatmapMetric::GemmRelErrorInput:
    case HeatmapMetric::GemmRelErrorWeight:
    case HeatmapMetric::GemmRelErrorGradOutput:
      return "low-precision GEMMs: ||Q(x) - x|| / ||x|| of the operand after quantization\n"
             "(simulated formats); hover a cell for every statistic of the operand" + scale;
    case HeatmapMetric::MomentErrorM:
    case HeatmapMetric::MomentErrorV:
      // Lines short enough for the 560-pixel maps of the PDF and PNG export.
      return "quantized moments: ||stored - exact|| / ||exact|| over the window\n"
             "(exact: the fp32 moment each step computed from the stored one)" + scale;
  }
  return scale;
}

// 0 % is the scale's first colour, never white: white read as "no data",
// so an fp32 run (0 % everywhere) looked empty.
// The scale is the HTML report's (report_charts.h).
QCPColorGradient lossGradient() {
  QCPColorGradient g;
  for (const plab::report::HeatmapStop& stop : plab::report::heatmapScale())
    g.setColorStopAt(stop.at, QColor(stop.color.r, stop.color.g, stop.color.b));
  g.setNanHandling(QCPColorGradient::nhTransparent);  // not measured: the hatched background shows
  return g;
}

const char* metricTitle(HeatmapMetric m) {
  switch (m) {
    case HeatmapMetric::UpdateLost: return "Update lost per layer";
    case HeatmapMetric::RoundedAway: return "Rounded away per layer";
    case HeatmapMetric::Fp16GradFlush: return "fp16 gradients flushed to zero per layer";
    case HeatmapMetric::Fp16GradZero: return "fp16 gradients zero per layer";
    case HeatmapMetric::GemmUnderflowInput: return "GEMM underflow per layer (input)";
    case HeatmapMetric::GemmUnderflowWeight: return "GEMM underflow per layer (weight)";
    case HeatmapMetric::GemmUnderflowGradOutput: return "GEMM underflow per layer (output gradient)";
    case HeatmapMetric::GemmSaturation: return "GEMM saturation per layer";
    case HeatmapMetric::GemmRelErrorInput: return "GEMM relative error per layer (input)";
    case HeatmapMetric::GemmRelErrorWeight: return "GEMM relative error per layer (weight)";
    case HeatmapMetric::GemmRelErrorGradOutput: return "GEMM relative error per layer (output gradient)";
    case HeatmapMetric::MomentErrorM: return "First moment (m) error per layer";
    case HeatmapMetric::MomentErrorV: return "Second moment (v) error per layer";
  }
  return "";
}

const char* metricAxisLabel(HeatmapMetric m) {
  switch (m) {
    case HeatmapMetric::UpdateLost: return "update lost (%)";
    case HeatmapMetric::RoundedAway: return "rounded away (%)";
    case HeatmapMetric::Fp16GradFlush: return "flushed to zero (%)";
    case HeatmapMetric::Fp16GradZero: return "zero (%)";
    case HeatmapMetric::GemmUnderflowInput:
    case HeatmapMetric::GemmUnderflowWeight:
    case HeatmapMetric::GemmUnderflowGradOutput: return "underflow (%)";
    case HeatmapMetric::GemmSaturation: return "saturated (%)";
    case HeatmapMetric::GemmRelErrorInput:
    case HeatmapMetric::GemmRelErrorWeight:
    case HeatmapMetric::GemmRelErrorGradOutput: return "relative error (%)";
    case HeatmapMetric::MomentErrorM: return "m relative error (%)";
    case HeatmapMetric::MomentErrorV: return "v relative error (%)";
  }
  return "";
}

std::optional<plab::GemmRole> metricRole(HeatmapMetric m) {
  switch (m) {
    case HeatmapMetric::GemmUnderflowInput:
    case HeatmapMetric::GemmRelErrorInput: return plab::GemmRole::Input;
    case HeatmapMetric::GemmUnderflowWeight:
    case HeatmapMetric::GemmRelErrorWeight: return plab::GemmRole::Weight;
    case HeatmapMetric::GemmUnderflowGradOutput:
    case HeatmapMetric::GemmRelErrorGradOutput: return plab::GemmRole::GradOutput;
    default: return std::nullopt;
  }
}

bool isUnderflow(HeatmapMetric m) {
  return m == HeatmapMetric::GemmUnderflowInput || m == HeatmapMetric::GemmUnderflowWeight ||
         m == HeatmapMetric::GemmUnderflowGradOutput;
}

struct LayerValue {
  std::string layer;
  double value = 0;  // fraction
  bool evidence = true;
  QString toolTip;
};

QString heatmapPercent(double x) { return QString::number(std::round(1000 * x) / 10 + 0.0, 'f', 1) + " %"; }  // no "-0.0"
// Shares that are often far below 0.1 % (fp16 flushes): three significant digits.
QString finePercent(double x) { return QString::number(100 * x, 'g', 3) + " %"; }

LayerValue updateLostValue(const plab::LayerWindowMetrics& w, int64_t step) {
  LayerValue v{w.layer, w.updateLost, true, {}};
  const std::optional<double> se = w.updateLostStdError;
  // JSON brings an infinite se back as NaN: unknown either way.
  const bool seKnown = se && std::isfinite(*se);
  const plab::LostEvidence e = plab::lostEvidence(se ? std::optional<double>(seKnown ? *se : INFINITY) : std::nullopt,
                                                  w.elements.value_or(0));
  v.evidence = e.enough;
  QStringList tip;
  tip << QString::fromStdString(w.layer) + QString(", window ending at step %1").arg(step);
  tip << "update lost " + heatmapPercent(w.updateLost) + (seKnown ? " ± " + heatmapPercent(*se) : QString());
  if (w.updatePending) tip << "pending in the Kahan buffer or master copy (arrives later, not lost): " + heatmapPercent(*w.updatePending);
  if (w.elements) tip << QString("%1 elements tracked").arg(*w.elements);
  if (!se) tip << "no uncertainty recorded (run folder written before it was)";
  if (!e.enough) tip << QString::fromStdString(e.reason) << "grey: at this size the figure is noise, not loss";
  v.toolTip = tip.join("\n");
  return v;
}

// Everything measured of one quantized operand, as TE's debug tools list it.
QString gemmOperandText(const plab::GemmOperandStats& g) {
  return QString("%1 (%2): underflow %3, saturated %4, dynamic range 2^%5, relative error %6, scales 2^%7 to 2^%8")
      .arg(QString::fromStdString(plab::gemmRoleId(g.role)), QString::fromStdString(plab::gemmFormatId(g.format)),
           finePercent(g.underflow), finePercent(g.saturation))
      .arg(g.dynamicRangeLog2, 0, 'f', 1)
      .arg(finePercent(g.relError))
      .arg(g.scaleLog2Min, 0, 'f', 0)
      .arg(g.scaleLog2Max, 0, 'f', 0);
}

// The layer values of one step in the chosen metric (fractions); empty when
// the step has none.
std::vector<LayerValue> layerValues(const plab::StepMetrics& m, HeatmapMetric metric) {
  std::vector<LayerValue> out;
  const QString at = QString(", step %1\n").arg(m.step);
  switch (metric) {
    case HeatmapMetric::UpdateLost:
      for (const auto& w : m.windowLayers) out.push_back(updateLostValue(w, m.step));
      break;
    case HeatmapMetric::RoundedAway:
      for (const auto& l : m.layers)
        out.push_back({l.layer, l.roundedAwayFraction, true,
                       QString::fromStdString(l.layer) + at + "rounded away " + heatmapPercent(l.roundedAwayFraction)});
      break;
    case HeatmapMetric::Fp16GradFlush:
      for (const auto& l : m.fp16GradLayers)
        if (l.flushShare)
          out.push_back({l.layer, *l.flushShare, true,
                         QString::fromStdString(l.layer) + at + "flushed to zero in fp16 " + finePercent(*l.flushShare) +
                             " of the non-zero gradient elements"});
      break;
    case HeatmapMetric::MomentErrorM:
    case HeatmapMetric::MomentErrorV:
      for (const auto& w : m.windowLayers) {
        if (!w.momentErrorM || !w.momentErrorV) continue;
        const bool first = metric == HeatmapMetric::MomentErrorM;
        out.push_back({w.layer, first ? *w.momentErrorM : *w.momentErrorV, true,
                       QString::fromStdString(w.layer) + QString(", window ending at step %1\n").arg(m.step) +
                           "moment error (||stored - exact|| / ||exact||): m " + finePercent(*w.momentErrorM) +
                           ", v " + finePercent(*w.momentErrorV)});
      }
      break;
    case HeatmapMetric::Fp16GradZero:
      for (const auto& l : m.fp16GradLayers)
        out.push_back({l.layer, l.zeroShare, true,
                       QString::fromStdString(l.layer) + at + "zero in fp16 " + finePercent(l.zeroShare) +
                           " of the gradient elements"});
      break;
    default: {
      // The GEMM statistics: one value per layer (its operand in the role,
      // or its most saturated operand), every operand in the tooltip.
      const std::optional<plab::GemmRole> role = metricRole(metric);
      std::map<std::string, size_t> index;
      for (const plab::GemmOperandStats& g : m.gemmLayers) {
        if (role && g.role != *role) continue;
        const double v = !role ? g.saturation : isUnderflow(metric) ? g.underflow : g.relError;
        auto [it, added] = index.emplace(g.layer, out.size());
        if (added) out.push_back({g.layer, v, true, QString::fromStdString(g.layer) + at.chopped(1)});
        else out[it->second].value = std::max(out[it->second].value, v);
      }
      for (const plab::GemmOperandStats& g : m.gemmLayers)
        if (auto it = index.find(g.layer); it != index.end()) out[it->second].toolTip += "\n" + gemmOperandText(g);
      break;
    }
  }
  return out;
}

}  // namespace

LayerHeatmap::LayerHeatmap(QWidget* parent) : RunChart(metricTitle(HeatmapMetric::UpdateLost), parent) {
  setObjectName("layerHeatmap");
  legend->setVisible(false);
  xAxis->setLabel("step");
  layerTicker_.reset(new QCPAxisTickerText);
  yAxis->setTicker(layerTicker_);
  yAxis->setSubTicks(false);
  yAxis->setTickLabelFont(QFont(font().family(), 7));
  map_ = new QCPColorMap(xAxis, yAxis);
  map_->setInterpolate(false);
  scale_ = new QCPColorScale(this);
  scale_->setType(QCPAxis::atRight);
  scale_->axis()->setLabel("update lost (%)");
  plotLayout()->addElement(plotLayout()->rowCount() - 1, 1, scale_);
  map_->setColorScale(scale_);
  map_->setGradient(lossGradient());
  map_->setDataRange(QCPRange(0, 100));
  // Cells without evidence: a grey layer over the map (its other cells NaN, transparent).
  noEvidence_ = new QCPColorMap(xAxis, yAxis);
  noEvidence_->setInterpolate(false);
  QCPColorGradient grey;
  grey.setColorStopAt(0, QColor(170, 170, 170));
  grey.setColorStopAt(1, QColor(170, 170, 170));
  grey.setNanHandling(QCPColorGradient::nhTransparent);
  noEvidence_->setGradient(grey);
  noEvidence_->setDataRange(QCPRange(0, 1));
  axisRect()->setBackground(QBrush(QColor(200, 200, 200), Qt::BDiagPattern));
  auto* group = new QCPMarginGroup(this);
  axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, group);
  scale_->setMarginGroup(QCP::msBottom | QCP::msTop, group);
  setExplanation(metricExplanation(metric_));
  // The hovered cell's figure becomes the widget's tooltip, which Qt shows
  // once the pointer rests (RunChart's curve readout hides tips while it moves).
  connect(this, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) {
    QString text;
    if (!cells_.empty() && axisRect()->rect().contains(e->pos())) {
      int column = -1, row = -1;
      map_->data()->coordToCell(xAxis->pixelToCoord(e->pos().x()), yAxis->pixelToCoord(e->pos().y()), &column, &row);
      // A single column or row is drawn twice (showRuns).
      if (cells_.size() == 1) column = std::min(column, 0);
      if (!cells_.empty() && cells_.front().size() == 1) row = std::min(row, 0);
      text = cellToolTip(column, row);
      if (text.isEmpty() && column >= 0 && row >= 0) text = "not measured here";
    }
    setToolTip(text.isEmpty() ? explanation() : text);
  });
}

bool LayerHeatmap::cellHasEvidence(int column, int row) const {
  if (column < 0 || row < 0 || column >= static_cast<int>(cells_.size())) return false;
  const auto& c = cells_[static_cast<size_t>(column)];
  return row < static_cast<int>(c.size()) && c[static_cast<size_t>(row)].measured && c[static_cast<size_t>(row)].evidence;
}

QString LayerHeatmap::cellToolTip(int column, int row) const {
  if (column < 0 || row < 0 || column >= static_cast<int>(cells_.size())) return {};
  const auto& c = cells_[static_cast<size_t>(column)];
  return row < static_cast<int>(c.size()) ? c[static_cast<size_t>(row)].toolTip : QString();
}

void LayerHeatmap::setSelectedRun(int run) { selected_ = run; }

void LayerHeatmap::setMetric(HeatmapMetric metric) {
  metric_ = metric;
  scale_->axis()->setLabel(metricAxisLabel(metric));
  setExplanation(metricExplanation(metric));
}

void LayerHeatmap::showSeries(const std::vector<ChartSeries>& series) {
  // A group's runs one by one: a heatmap shows one run.
  std::vector<const plab::RunRecord*> runs;
  std::vector<QString> labels;
  for (const ChartSeries& s : series)
    for (size_t k = 0; k < s.runs.size(); ++k) {
      runs.push_back(s.runs[k]);
      labels.push_back(s.group() ? QString::fromStdString(s.runs[k]->config.name) : s.label);
    }
  int run = selected_;
  if (run < 0 || run >= static_cast<int>(runs.size())) {
    // The latest run: started last (the list holds runs in the order they
    // were added, which after a restart is not the order they ran).
    run = -1;
    const bool timed = starts_.size() == runs.size();
    for (int i = 0; i < static_cast<int>(runs.size()); ++i) {
      const auto& steps = runs[static_cast<size_t>(i)]->steps;
      const bool has = std::any_of(steps.begin(), steps.end(),
                                   [this](const plab::StepMetrics& m) { return !layerValues(m, metric_).empty(); });
      if (has && (run < 0 || !timed || starts_[static_cast<size_t>(i)] >= starts_[static_cast<size_t>(run)])) run = i;
    }
  }
  shown_ = run;
  layers_.clear();
  cells_.clear();
  layerTicker_->clear();
  if (run < 0) {
    map_->data()->clear();
    noEvidence_->data()->clear();
    titleElement_->setText(metricTitle(metric_));
    scheduleReplot();
    return;
  }
  const auto& record = *runs[static_cast<size_t>(run)];
  // Runs named alike read "name (2)", as in the legend and the run chooser.
  const QString name = labels[static_cast<size_t>(run)];
  titleElement_->setText(QString(metricTitle(metric_)) + " — " + name);

  // Rows: the model-order layer list from RunInfo, plus any layer only seen in steps.
  QHash<QString, int> rowOf;
  std::vector<std::string> rowNames;
  auto addRow = [&](const std::string& name) {
    const QString key = QString::fromStdString(name);
    if (rowOf.contains(key)) return;
    rowOf.insert(key, static_cast<int>(rowNames.size()));
    rowNames.push_back(name);
  };
  for (const auto& name : record.info.layers) addRow(name);
  std::vector<const plab::StepMetrics*> columns;
  std::vector<std::vector<LayerValue>> values;
  for (const auto& m : record.steps) {
    auto v = layerValues(m, metric_);
    if (v.empty()) continue;
    columns.push_back(&m);
    for (const LayerValue& lv : v) addRow(lv.layer);
    values.push_back(std::move(v));
  }
  if (columns.empty() || rowNames.empty()) {
    map_->data()->clear();
    noEvidence_->data()->clear();
    scheduleReplot();
    return;
  }
  const int nx = static_cast<int>(columns.size());
  const int ny = static_cast<int>(rowNames.size());
  // One column (or row) has no width of its own in QCPColorMap (its range
  // is a point): draw it twice over one step's (one row's) width.
  const int mapX = std::max(nx, 2), mapY = std::max(ny, 2);
  const double first = double(columns.front()->step), last = double(columns.back()->step);
  const QCPRange keys = nx > 1 ? QCPRange(first, last) : QCPRange(first - 0.25, first + 0.25);
  const QCPRange rows = ny > 1 ? QCPRange(0, ny - 1) : QCPRange(-0.25, 0.25);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (QCPColorMap* m : {map_, noEvidence_}) {
    m->data()->setSize(mapX, mapY);
    m->data()->setRange(keys, rows);
    m->data()->fill(nan);  // not measured
  }
  cells_.assign(static_cast<size_t>(nx), std::vector<Cell>(static_cast<size_t>(ny)));
  for (int x = 0; x < nx; ++x)
    for (const LayerValue& lv : values[static_cast<size_t>(x)]) {
      const int y = rowOf.value(QString::fromStdString(lv.layer));
      for (int mx = x; mx < (nx == 1 ? 2 : x + 1); ++mx)
        for (int my = y; my < (ny == 1 ? 2 : y + 1); ++my) {
          if (lv.evidence) map_->data()->setCell(mx, my, 100.0 * lv.value);
          else noEvidence_->data()->setCell(mx, my, 0.5);
        }
      cells_[static_cast<size_t>(x)][static_cast<size_t>(y)] = {true, lv.evidence, lv.toolTip};
    }
  for (int y = 0; y < ny; ++y) layers_ << QString::fromStdString(rowNames[static_cast<size_t>(y)]);
  labelLayers();
  map_->setDataRange(QCPRange(0, scaleMax_));
  scheduleReplot();
}

void LayerHeatmap::labelLayers() {
  layerTicker_->clear();
  const int rows = static_cast<int>(layers_.size());
  if (rows == 0) return;
  // At most ~24 labels, and no more than the plot's height holds apart (at
  // 1280x720 every name was drawn over its neighbours).
  const int line = QFontMetrics(yAxis->tickLabelFont()).height();
  const int plot = axisRect()->height() > 0 ? axisRect()->height() : std::max(1, height() - 120);
  const int fit = std::max(1, plot / std::max(1, line));
  const int every = std::max({1, (rows + 23) / 24, (rows + fit - 1) / fit});
  for (int y = 0; y < rows; y += every) layerTicker_->addTick(y, shortLayerName(layers_[y].toStdString()));
}

void LayerHeatmap::resizeEvent(QResizeEvent* event) {
  RunChart::resizeEvent(event);
  labelLayers();
}

void LayerHeatmap::setScaleMax(double percent) {
  scaleMax_ = std::clamp(percent, 1e-6, 100.0);
  map_->setDataRange(QCPRange(0, scaleMax_));
  scheduleReplot();
}

void LayerHeatmap::fitView() {
  map_->rescaleAxes();  // noEvidence_ has the same extent
  if (xAxis->range().size() <= 0) xAxis->setRange(xAxis->range().lower - 1, xAxis->range().upper + 1);
  if (yAxis->range().size() <= 0) yAxis->setRange(yAxis->range().lower - 1, yAxis->range().upper + 1);
}

}  // namespace plab::ui
