#include "charts/memory_chart.h"

#include <algorithm>
#include <cmath>

#include "report/fp32_comparison.h"
#include "run/run_summary.h"
#include "util/format.h"

namespace plab::ui {
namespace {

double mib(int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

std::array<double, MemoryChart::kParts> partsOf(const plab::MemoryBreakdown& m) {
  return {mib(m.weights), mib(m.gradients), mib(m.moments), mib(m.master), mib(m.kahan)};
}

// "peak −43.8 %" against the fp32 run; the fp32 run shows its own peak.
QString peakLine(const plab::RunRecord& run, const plab::RunRecord* fp32Reference) {
  if (run.config.mode == plab::OptimizerMode::Fp32AdamW)
    return "peak " + QString::number(mib(*run.result.trainingPeakBytes), 'f', 1) + " MiB";
  const auto saved = plab::report::measuredPeakSaving(run, fp32Reference);
  if (!saved) return "peak: " + QString::fromStdString(plab::report::peakSavingText(run, fp32Reference));
  return "peak " + QString(*saved >= 0 ? "−" : "+") + percentText(std::abs(*saved));
}

}  // namespace

MemoryChart::MemoryChart(QWidget* parent) : RunChart("Training-state memory", parent) {
  setObjectName("memoryChart");
  setExplanation("weights + gradients + AdamW moments + master\ncopies + Kahan buffers; \"state −N %\": saved vs fp32 AdamW;\n"
                 "\"peak −N %\": the measured training peak vs the fp32 run's\n(the table and reports give both in MiB)");
  yAxis->setLabel("MiB");
  ticker_.reset(new QCPAxisTickerText);
  xAxis->setTicker(ticker_);
  xAxis->setSubTicks(false);
  xAxis->setTickLabelRotation(35);
  xAxis->setTickLabelFont(QFont(font().family(), 7));
  xAxis->grid()->setVisible(false);
  const char* names[kParts] = {"weights", "gradients", "moments", "master", "kahan"};
  const QColor colors[kParts] = {QColor(0, 114, 178), QColor(86, 180, 233), QColor(230, 159, 0), QColor(213, 94, 0),
                                 QColor(0, 158, 115)};
  for (int i = 0; i < kParts; ++i) {
    auto* bars = new QCPBars(xAxis, yAxis);
    bars->setName(names[i]);
    bars->setPen(QPen(colors[i].darker(120)));
    bars->setBrush(colors[i]);
    bars->setWidth(0.6);
    if (i > 0) bars->moveAbove(parts_[static_cast<size_t>(i - 1)]);
    parts_[static_cast<size_t>(i)] = bars;
  }
  // One row of legend entries under the bars, off the data.
  placeLegendBelow();
  showLegendIfAny();
}

void MemoryChart::showRuns(const std::vector<plab::RunRecord>& runs) {
  std::array<QVector<double>, kParts> values;
  QVector<double> keys;
  ticker_->clear();
  saved_.clear();
  double maxTotal = 0;
  auto addBar = [&](const plab::MemoryBreakdown& m, const QString& label) {
    const double key = static_cast<double>(keys.size() + 1);
    keys << key;
    const auto parts = partsOf(m);
    for (int i = 0; i < kParts; ++i) values[static_cast<size_t>(i)] << parts[static_cast<size_t>(i)];
    ticker_->addTick(key, label);
    maxTotal = std::max(maxTotal, mib(m.total()));
  };
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunSummary s = summarizeRun(runs[i], runs[i].result.stepsDone > 0);
    if (s.memoryBytes <= 0 || s.fp32BaselineBytes <= 0) continue;  // nothing measured yet
    if (keys.empty()) addBar(plab::fp32AdamWBaseline(runs[i].info.parameterCount), "fp32 AdamW");
    const plab::MemoryBreakdown& m =
        !runs[i].steps.empty() ? runs[i].steps.back().memory : runs[i].info.measuredMemory;
    // Two short lines under each bar (three overlapped once seven bars
    // shared the chart): the mode, then the state saving and, where
    // measured, the peak saving against the fp32 run.
    QString label = QString::fromStdString(plab::optimizerModeId(runs[i].config.mode)) + "\nstate −" +
                    percentText(s.savedFraction, 0);
    const auto ref = plab::report::fp32TwinIndex(runs, i);
    if (runs[i].result.trainingPeakBytes) label += ", " + peakLine(runs[i], ref ? &runs[*ref] : nullptr);
    addBar(m, label);
    saved_.push_back(s.savedFraction);
  }
  for (int i = 0; i < kParts; ++i) parts_[static_cast<size_t>(i)]->setData(keys, values[static_cast<size_t>(i)], true);
  keyRange_ = QCPRange(0.4, static_cast<double>(std::max<qsizetype>(keys.size(), 1)) + 0.6);
  mibRange_ = QCPRange(0, std::max(maxTotal * 1.08, 1e-3));
  legend->setVisible(!keys.empty());
  fitView();
  scheduleReplot();
}

void MemoryChart::fitView() {
  xAxis->setRange(keyRange_);
  yAxis->setRange(mibRange_);
}

}  // namespace plab::ui
