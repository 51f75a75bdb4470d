#include "advisor/frontier_chart.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace plab::ui {

FrontierChart::FrontierChart(QWidget* parent) : QCustomPlot(parent) {
  setObjectName("frontierChart");
  setMinimumHeight(220);
  plotLayout()->insertRow(0);
  plotLayout()->addElement(0, 0, new QCPTextElement(this, "Frontier: memory saved vs loss minus fp32", QFont(font().family(), 10, QFont::Bold)));
  xAxis->setLabel("training state saved vs fp32 AdamW (%)");
  yAxis->setLabel("val loss − fp32 (nats)");
  errors_ = new QCPErrorBars(xAxis, yAxis);
  errors_->removeFromLegend();
  errors_->setPen(QPen(QColor(90, 90, 90)));
  others_ = addGraph();
  others_->setLineStyle(QCPGraph::lsNone);
  others_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(QColor(0, 114, 178), 1.6), Qt::white, 9));
  others_->setName("candidate");
  chosen_ = addGraph();
  chosen_->setLineStyle(QCPGraph::lsNone);
  chosen_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssStar, QPen(QColor(213, 94, 0), 2), QColor(213, 94, 0), 16));
  chosen_->setName("chosen");
  errors_->setDataPlottable(others_);
  tolerance_ = new QCPItemStraightLine(this);
  tolerance_->setPen(QPen(QColor(180, 30, 30), 1.2, Qt::DashLine));
  tolerance_->setVisible(false);
  legend->setVisible(true);
  axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignBottom | Qt::AlignRight);
  setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
}

int FrontierChart::pointCount() const { return others_->dataCount() + chosen_->dataCount(); }

void FrontierChart::showAdvice(const plab::Advice& advice) {
  others_->data()->clear();
  chosen_->data()->clear();
  for (QCPItemText* t : labels_) removeItem(t);
  labels_.clear();
  QVector<double> keys, values, errorMinus, errorPlus;
  double lowest = 0, highest = advice.tolerance;
  // Plans often share a saving (every bf16 recipe saves 50 %): labels of
  // points close in x alternate above and below, so they do not overprint.
  std::vector<double> labelled;
  for (size_t i = 0; i < advice.candidates.size(); ++i) {
    const plab::AdvisorCandidate& c = advice.candidates[i];
    if (!c.lossVsFp32) continue;  // not confirmed (stopped before it ran)
    const double x = 100 * c.memorySaved, y = *c.lossVsFp32;
    lowest = std::min({lowest, y, c.ciLow});
    highest = std::max({highest, y, c.ciHigh});
    if (static_cast<int>(i) == advice.chosen) chosen_->addData(x, y);
    keys << x;
    values << y;
    errorMinus << std::max(0.0, y - c.ciLow);
    errorPlus << std::max(0.0, c.ciHigh - y);
    auto* label = new QCPItemText(this);
    label->position->setCoords(x, y);
    const int near = static_cast<int>(std::count_if(labelled.begin(), labelled.end(),
                                                    [x](double other) { return std::abs(other - x) < 12; }));
    labelled.push_back(x);
    const bool below = near % 2 == 1;
    label->setPositionAlignment(Qt::AlignLeft | (below ? Qt::AlignTop : Qt::AlignBottom));
    label->setPadding(QMargins(6, below ? 2 + 10 * (near / 2) : 0, 0, below ? 0 : 2 + 10 * (near / 2)));
    label->setText(QString::fromStdString(c.name));
    label->setFont(QFont(font().family(), 8));
    label->setColor(static_cast<int>(i) == advice.chosen ? QColor(213, 94, 0) : QColor(60, 60, 60));
    labels_ << label;
  }
  others_->setData(keys, values);
  errors_->setData(errorMinus, errorPlus);
  tolerance_->setVisible(!keys.isEmpty());
  tolerance_->point1->setCoords(0, advice.tolerance);
  tolerance_->point2->setCoords(100, advice.tolerance);
  others_->setName(QString("candidate (±95 %, %1 seeds)").arg(advice.seeds.size()));
  if (!keys.isEmpty()) {
    auto* label = new QCPItemText(this);
    label->position->setCoords(100, advice.tolerance);
    label->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
    label->setText(QString("tolerance +%1 nats").arg(advice.tolerance, 0, 'g', 3));
    label->setFont(QFont(font().family(), 8));
    label->setColor(QColor(180, 30, 30));
    labels_ << label;
  }
  xAxis->setRange(-5, 105);
  const double pad = 0.15 * std::max(1e-4, highest - lowest);
  yAxis->setRange(lowest - pad, highest + pad);
  replot();
}

}  // namespace plab::ui
