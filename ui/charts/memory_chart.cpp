#include "charts/memory_chart.h"

#include <algorithm>
#include <cmath>

#include "charts/run_colors.h"
#include "report/fp32_comparison.h"
#include "report/run_relations.h"
#include "report/number_text.h"
#include "run/run_summary.h"
#include "util/format.h"

namespace plab::ui {
namespace {

double mib(int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

// What ZeRO-1 shards: moments, master weights and Kahan buffers (weights
// and gradients are replicated on every rank).
int64_t optimizerStateBytes(const plab::MemoryBreakdown& m) { return m.moments + m.master + m.kahan + m.scales; }

std::array<double, MemoryChart::kParts> partsOf(const plab::MemoryBreakdown& m) {
  return {mib(m.weights), mib(m.gradients), mib(m.moments), mib(m.master), mib(m.kahan), mib(m.scales)};
}

// "peak −43.8 %" against the fp32 run; the fp32 run shows its own peak.
QString peakLine(const plab::RunRecord& run, const plab::RunRecord* fp32Reference) {
  if (run.config.mode == plab::OptimizerMode::Fp32AdamW)
    return "peak " + QString::number(mib(*run.result.trainingPeakBytes), 'f', 1) + " MiB";
  const auto saved = plab::report::measuredPeakSaving(run, fp32Reference);
  if (!saved) return "peak: " + QString::fromStdString(plab::report::peakSavingText(run, fp32Reference));
  return "peak " + QString::fromStdString(plab::report::savingText(*saved));
}

// The baseline is computed, not measured: neutral grey. The legend shows
// the parts in dark grey.
const QColor kBaselineColor(150, 150, 150);
const QColor kLegendColor(90, 90, 90);
constexpr int kCompactBelow = 330;  // chart height in pixels
const QFont& savingFont() {
  static const QFont font(QFont().family(), 7);
  return font;
}

// A part of a bar in the bar's colour: weights solid, gradients lighter,
// moments hatched, master copies cross-hatched, Kahan buffers dotted, the
// quantized moments' scales hatched the other way.
QBrush partBrush(int part, const QColor& c) {
  switch (part) {
    case 0: return QBrush(c);
    case 1: {
      const double t = 0.55;  // towards white
      return QBrush(QColor(int(c.red() + (255 - c.red()) * t), int(c.green() + (255 - c.green()) * t),
                           int(c.blue() + (255 - c.blue()) * t)));
    }
    case 2: return QBrush(c, Qt::BDiagPattern);
    case 3: return QBrush(c, Qt::CrossPattern);
    case 5: return QBrush(c, Qt::FDiagPattern);
    default: return QBrush(c, Qt::Dense5Pattern);
  }
}

// QCPBars draws every bar with one pen and brush; these take one per bar
// (the run's), and keep their own for the legend.
class PerBarStyledBars : public QCPBars {
 public:
  PerBarStyledBars(QCPAxis* key, QCPAxis* value, int part) : QCPBars(key, value), part_(part) {}
  void setBarStyles(std::vector<QPen> pens, std::vector<QColor> colors) {
    pens_ = std::move(pens);
    colors_ = std::move(colors);
  }
  QColor barColor(size_t bar) const { return bar < colors_.size() ? colors_[bar] : brush().color(); }

 protected:
  void draw(QCPPainter* painter) override {
    if (mDataContainer->isEmpty()) return;
    QCPBarsDataContainer::const_iterator begin, end;
    getVisibleDataBounds(begin, end);
    applyDefaultAntialiasingHint(painter);
    for (auto it = begin; it != end; ++it) {
      const size_t bar = static_cast<size_t>(it - mDataContainer->constBegin());
      painter->setPen(bar < pens_.size() ? pens_[bar] : pen());
      painter->setBrush(bar < colors_.size() ? partBrush(part_, colors_[bar]) : brush());
      painter->drawPolygon(getBarRect(it->key, it->value));
    }
  }

 private:
  int part_;
  std::vector<QPen> pens_;
  std::vector<QColor> colors_;
};

}  // namespace

MemoryChart::MemoryChart(QWidget* parent) : RunChart("Training-state memory", parent) {
  setObjectName("memoryChart");
  // Short lines: the chart is a third of the results side at 1280 pixels.
  setExplanation("state −N %: saved vs fp32 AdamW (grey, computed)\n"
                 "peak −N %: the measured peak vs the fp32 run's");
  xAxis->setLabel("MiB");
  ticker_.reset(new QCPAxisTickerText);
  yAxis->setTicker(ticker_);
  yAxis->setSubTicks(false);
  yAxis->setRangeReversed(true);  // the baseline on top, then the runs in order
  yAxis->setTickLabelFont(QFont(font().family(), 7));
  yAxis->grid()->setVisible(false);
  const char* names[kParts] = {"weights", "gradients", "moments", "master", "kahan", "scales"};
  for (int i = 0; i < kParts; ++i) {
    auto* bars = new PerBarStyledBars(yAxis, xAxis, i);  // horizontal: keys on the y axis
    bars->setName(names[i]);
    bars->setPen(QPen(kLegendColor));
    bars->setBrush(partBrush(i, kLegendColor));
    bars->setWidth(0.7);
    if (i > 0) bars->moveAbove(parts_[static_cast<size_t>(i - 1)]);
    parts_[static_cast<size_t>(i)] = bars;
  }
  // One row of legend entries under the bars, off the data.
  placeLegendBelow();
  showLegendIfAny();
  // The rows' height is known once laid out: thin the names again if it
  // changed the step.
  connect(this, &QCustomPlot::afterReplot, this, [this] {
    const int step = labelStep_;
    const bool wasCompact = compact_, fitted = textsFit_;
    setCompact(height() < kCompactBelow);  // a hidden widget gets no resize events
    if (following()) fitView();
    else thinLabels();
    if (labelStep_ != step || compact_ != wasCompact || textsFit_ != fitted) replot(QCustomPlot::rpQueuedReplot);
  });
}

void MemoryChart::showSeries(const std::vector<ChartSeries>& series) {
  std::array<QVector<double>, kParts> values;
  QVector<double> keys;
  std::vector<QPen> pens;
  std::vector<QColor> colors;
  ticker_->clear();
  savingItems_.clear();
  saved_.clear();
  totals_.clear();
  barLabels_.clear();
  savings_.clear();
  summary_.clear();
  clearItems();
  auto addBar = [&](const plab::MemoryBreakdown& m, const QString& label, const QPen& pen, const QColor& color,
                    const QString& saving) {
    const double key = static_cast<double>(keys.size() + 1);
    keys << key;
    const auto parts = partsOf(m);
    for (int i = 0; i < kParts; ++i) values[static_cast<size_t>(i)] << parts[static_cast<size_t>(i)];
    barLabels_ << label;
    pens.push_back(pen);
    colors.push_back(color);
    totals_.push_back(mib(m.total()));
    if (saving.isEmpty()) {
      savingItems_.push_back(nullptr);
      return;
    }
    savings_ << saving;
    auto* text = new QCPItemText(this);
    text->position->setAxes(xAxis, yAxis);
    text->position->setCoords(mib(m.total()), key);
    text->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    text->setPadding(QMargins(4, 0, 0, 0));
    text->setFont(savingFont());
    text->setColor(QColor(60, 60, 60));
    text->setText(saving);
    text->setClipToAxisRect(false);
    savingItems_.push_back(text);
  };
  // The series that measured memory, with what they save (a group: the
  // mean over its runs).
  struct Measured {
    const ChartSeries* series;
    double saved = 0;
    std::optional<double> peak;
  };
  std::vector<Measured> measured;
  for (const ChartSeries& s : series) {
    Measured m{&s, 0, std::nullopt};
    double sum = 0, peakSum = 0;
    int n = 0, peaks = 0;
    for (size_t k = 0; k < s.runs.size(); ++k) {
      const RunSummary summary = summarizeRun(*s.runs[k], s.runs[k]->result.stepsDone > 0);
      if (summary.memoryBytes <= 0 || summary.fp32BaselineBytes <= 0) continue;  // nothing measured yet
      sum += summary.savedFraction;
      ++n;
      if (const auto p = plab::report::measuredPeakSaving(*s.runs[k], s.twins[k]); p && s.twins[k] != s.runs[k]) {
        peakSum += *p;
        ++peaks;
      }
    }
    if (n == 0) continue;
    m.saved = sum / n;
    if (peaks > 0) m.peak = peakSum / peaks;
    measured.push_back(m);
  }
  // Many series: those that save the most, in their order, and one line for the rest.
  std::vector<Measured> shown = measured;
  if (static_cast<int>(measured.size()) > kMaxBars) {
    std::vector<size_t> order(measured.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return measured[a].saved > measured[b].saved; });
    std::vector<bool> keep(measured.size(), false);
    for (int i = 0; i < kMaxBars; ++i) keep[order[static_cast<size_t>(i)]] = true;
    shown.clear();
    double low = 1e9, high = -1e9;
    for (size_t i = 0; i < measured.size(); ++i) {
      if (keep[i]) {
        shown.push_back(measured[i]);
        continue;
      }
      low = std::min(low, measured[i].saved);
      high = std::max(high, measured[i].saved);
    }
    const size_t rest = measured.size() - shown.size();
    summary_ = QString("+%1 more saving %2 to %3 (the table lists all)")
                   .arg(rest)
                   .arg(percentText(low, 0))
                   .arg(percentText(high, 0));
  }
  for (const Measured& m : shown) {
    const ChartSeries& s = *m.series;
    const plab::RunRecord& run = s.first();
    if (keys.empty())
      addBar(plab::fp32AdamWBaseline(run.info.parameterCount), "fp32 AdamW (computed)", QPen(kBaselineColor.darker(130)),
             kBaselineColor, QString());
    const plab::MemoryBreakdown& mem = !run.steps.empty() ? run.steps.back().memory : run.info.measuredMemory;
    // Beside the bar: the state saving and, where measured, the peak
    // saving against the fp32 run. More than fp32 (fp16-mixed's fp32
    // gradients and master) reads "+".
    QString saving = "state " + QString::fromStdString(plab::report::savingText(m.saved, 0));
    if (s.group()) {
      if (m.peak) saving += ", peak " + QString::fromStdString(plab::report::savingText(*m.peak));
      saving += QString(" (mean of %1)").arg(s.runs.size());
    } else if (run.result.trainingPeakBytes) {
      saving += ", " + peakLine(run, s.twins.front() == &run ? nullptr : s.twins.front());
    }
    addBar(mem, s.label, runPen(s.style, 1.0), toQColor(s.style.color), saving);
    saved_.push_back(m.saved);
    if (s.group()) continue;
    // A run on N processes: what each rank holds, under the run's bar.
    const auto& ranks = !run.result.rankMemory.empty() ? run.result.rankMemory : run.info.rankMemory;
    if (ranks.size() < 2) continue;
    int64_t jobOptimizerState = 0;
    for (const plab::MemoryBreakdown& r : ranks) jobOptimizerState += optimizerStateBytes(r);
    const bool sharded = run.info.optimizerStateSharded;
    QPen rankPen = runPen(s.style, 1.0);
    rankPen.setStyle(Qt::DashLine);
    for (size_t rank = 0; rank < ranks.size(); ++rank) {
      // Sharded: the rank's part of the job's state; replicated: all of it.
      const double share = !sharded || jobOptimizerState <= 0
                               ? 1.0
                               : static_cast<double>(optimizerStateBytes(ranks[rank])) / jobOptimizerState;
      // The first rank's name heads the group: it stays on the axis when the
      // texts beside the bars do not fit.
      const QString label = rank == 0 ? QString("per rank (%1 processes): rank 0").arg(ranks.size())
                                      : QString("rank %1").arg(rank);
      addBar(ranks[rank], label, rankPen, toQColor(s.style.color),
             QString("%1 of the optimizer state").arg(percentText(share)));
    }
  }
  if (!summary_.isEmpty()) {
    // A row without a bar: its text is the tick label.
    const double key = static_cast<double>(keys.size() + 1);
    keys << key;
    for (int i = 0; i < kParts; ++i) values[static_cast<size_t>(i)] << 0.0;
    barLabels_ << summary_;
    pens.push_back(Qt::NoPen);
    colors.push_back(Qt::transparent);
    totals_.push_back(0);
    savingItems_.push_back(nullptr);
  }
  for (int i = 0; i < kParts; ++i) {
    auto* bars = static_cast<PerBarStyledBars*>(parts_[static_cast<size_t>(i)]);
    bars->setData(keys, values[static_cast<size_t>(i)], true);
    bars->setBarStyles(pens, colors);
  }
  // The scales' entry only where a run quantizes its moments.
  const QVector<double>& scales = values[kParts - 1];
  if (std::any_of(scales.begin(), scales.end(), [](double v) { return v > 0; })) parts_[kParts - 1]->addToLegend();
  else parts_[kParts - 1]->removeFromLegend();
  keyMax_ = static_cast<double>(std::max<qsizetype>(keys.size(), 1));
  legend->setVisible(!keys.empty());
  labelStep_ = 0;  // the ticks are laid out again
  fitView();
  scheduleReplot();
}

QStringList MemoryChart::shownBarLabels() const { return ticker_->ticks().values(); }

void MemoryChart::thinLabels() {
  // Rows shorter than a line of the tick font: every k-th name (and the
  // text beside its bar), so that names never overlap.
  const double plotHeight = axisRect()->height() > 20 ? axisRect()->height() : std::max(height() - 120, 40);
  const double row = plotHeight / (keyMax_ + 0.2);
  const int line = QFontMetrics(yAxis->tickLabelFont()).height();
  const int step = std::max(1, static_cast<int>(std::ceil(line / std::max(row, 1.0))));
  if (step == labelStep_) return;
  labelStep_ = step;
  ticker_->clear();
  for (qsizetype bar = 0; bar < barLabels_.size(); bar += step) ticker_->addTick(static_cast<double>(bar + 1), barLabels_[bar]);
  showSavingTexts();
}

void MemoryChart::setCompact(bool on) {
  // Short (a 1280x720 window): the two lines of explanation leave the plot
  // (they stay the chart's tooltip) and the parts' legend shrinks.
  if (on == compact_ || !explanationElement_) return;
  compact_ = on;
  // Out of the layout it would still be drawn where it was: hidden too.
  explanationElement_->setVisible(!on);
  if (on) {
    plotLayout()->take(explanationElement_);
    plotLayout()->simplify();
  } else {
    plotLayout()->insertRow(1);
    plotLayout()->addElement(1, 0, explanationElement_);
  }
  QFont f = legend->font();
  f.setPointSize(on ? 7 : 8);
  legend->setFont(f);
  legend->setIconSize(on ? QSize(14, 8) : QSize(32, 18));
}

QString MemoryChart::hoverText(const QPoint& pos) const {
  const long bar = std::lround(yAxis->pixelToCoord(pos.y())) - 1;
  if (bar < 0 || bar >= barLabels_.size()) return {};
  QStringList lines = {barLabels_[bar]};
  const qsizetype run = bar - 1;  // bar 0 is the baseline
  if (run >= 0 && run < savings_.size()) lines << savings_[run];
  double total = 0;
  for (int part = 0; part < kParts; ++part) {
    const double v = parts_[static_cast<size_t>(part)]->data()->at(static_cast<int>(bar))->value;
    total += v;
    if (v > 0) lines << QString("%1: %2 MiB").arg(parts_[static_cast<size_t>(part)]->name()).arg(v, 0, 'f', 2);
  }
  lines << QString("total: %1 MiB").arg(total, 0, 'f', 2);
  return lines.join("\n");
}

std::vector<QColor> MemoryChart::barColors() const {
  std::vector<QColor> out;
  const auto* bars = static_cast<const PerBarStyledBars*>(parts_[0]);
  for (int i = 0; i < bars->dataCount(); ++i) out.push_back(bars->barColor(static_cast<size_t>(i)));
  return out;
}

void MemoryChart::fitView() {
  yAxis->setRange(0.4, keyMax_ + 0.6);
  thinLabels();
  // Room right of the longest bars for the text beside them.
  const double plotWidth = axisRect()->width() > 50 ? axisRect()->width() : std::max(width() - 140, 120);
  const QFontMetrics metrics(savingFont());
  double upper = 1e-3, withText = 1e-3;
  bool fits = true;
  for (size_t bar = 0; bar < totals_.size(); ++bar) {
    upper = std::max(upper, totals_[bar] * 1.05);
    withText = std::max(withText, totals_[bar] * 1.05);
    const qsizetype run = static_cast<qsizetype>(bar) - 1;  // bar 0 is the baseline, without text
    if (run < 0 || run >= savings_.size()) continue;
    const double room = plotWidth - metrics.horizontalAdvance(savings_[run]) - 10;
    fits = fits && room >= plotWidth * 0.3;
    withText = std::max(withText, totals_[bar] * plotWidth / std::max(room, 1.0));
  }
  // Too narrow for the texts beside the bars: the bars alone (hovering a
  // bar, the table and the reports give the savings).
  textsFit_ = fits;
  xAxis->setRange(0, fits ? withText : upper);
  showSavingTexts();
}

void MemoryChart::showSavingTexts() {
  for (size_t bar = 0; bar < savingItems_.size(); ++bar)
    if (savingItems_[bar]) savingItems_[bar]->setVisible(textsFit_ && static_cast<int>(bar) % std::max(labelStep_, 1) == 0);
}

void MemoryChart::resizeEvent(QResizeEvent* event) {
  setCompact(height() < kCompactBelow);
  RunChart::resizeEvent(event);
  if (following()) fitView();
}

}  // namespace plab::ui
