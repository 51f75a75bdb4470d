#include "charts/memory_chart.h"

#include "run/run_summary.h"

#include <algorithm>

namespace plab::ui {

MemoryChart::MemoryChart(QWidget* parent) : RunChart("Memory saved vs fp32", parent) {
  setObjectName("memoryChart");
  yAxis->setLabel("saved (MiB)");
  yAxis2->setVisible(true);
  yAxis2->setLabel("saved (% of fp32 AdamW)");
  ticker_.reset(new QCPAxisTickerText);
  xAxis->setTicker(ticker_);
  xAxis->setTickLabelRotation(20);
  xAxis->setSubTicks(false);
  xAxis->grid()->setVisible(false);

  savedMiB_ = new QCPBars(xAxis, yAxis);
  savedMiB_->setName("saved MiB (left)");
  savedMiB_->setPen(QPen(QColor(31, 119, 180)));
  savedMiB_->setBrush(QColor(31, 119, 180, 170));
  savedPercent_ = new QCPBars(xAxis, yAxis2);
  savedPercent_->setName("saved % (right)");
  savedPercent_->setPen(QPen(QColor(255, 127, 14)));
  savedPercent_->setBrush(QColor(255, 127, 14, 170));
  auto* group = new QCPBarsGroup(this);
  group->setSpacingType(QCPBarsGroup::stAbsolute);
  group->setSpacing(2);
  savedMiB_->setWidth(0.35);
  savedPercent_->setWidth(0.35);
  savedMiB_->setBarsGroup(group);
  savedPercent_->setBarsGroup(group);
  axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
}

void MemoryChart::showRuns(const std::vector<plab::RunRecord>& runs) {
  QVector<double> keys, mib, percent;
  ticker_->clear();
  double maxMiB = 0, minMiB = 0, maxPct = 0, minPct = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunSummary s = summarizeRun(runs[i], runs[i].result.stepsDone > 0);
    if (s.memoryBytes <= 0 || s.fp32BaselineBytes <= 0) continue;  // nothing measured yet
    const double key = static_cast<double>(i + 1);
    const double saved = double(s.fp32BaselineBytes - s.memoryBytes) / (1024.0 * 1024.0);
    keys << key;
    mib << saved;
    percent << 100.0 * s.savedFraction;
    ticker_->addTick(key, runLabel(runs[i], static_cast<int>(i)));
    maxMiB = std::max(maxMiB, saved);
    minMiB = std::min(minMiB, saved);
    maxPct = std::max(maxPct, 100.0 * s.savedFraction);
    minPct = std::min(minPct, 100.0 * s.savedFraction);
  }
  savedMiB_->setData(keys, mib, true);
  savedPercent_->setData(keys, percent, true);
  keyRange_ = QCPRange(0.4, static_cast<double>(std::max<size_t>(runs.size(), 1)) + 0.6);
  // Headroom above the bars for the legend.
  mibRange_ = QCPRange(minMiB * 1.15, std::max(maxMiB * 1.45, 1e-3));
  percentRange_ = QCPRange(minPct * 1.15, std::max(maxPct * 1.45, 1.0));
  fitView();
  scheduleReplot();
}

void MemoryChart::fitView() {
  xAxis->setRange(keyRange_);
  yAxis->setRange(mibRange_);
  yAxis2->setRange(percentRange_);
}

}  // namespace plab::ui
