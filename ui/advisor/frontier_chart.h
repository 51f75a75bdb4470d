#pragma once
// The advisor's frontier: one point per candidate plan, memory saved (share
// of fp32's training state) against its final validation loss minus fp32's
// (mean over the seeds, paired, with its 95 % interval), the tolerance as a
// dashed line, the chosen plan filled and larger, rejected plans hollow.
#include "advisor/advisor.h"
#include "qcustomplot.h"

namespace plab::ui {

class FrontierChart : public QCustomPlot {
  Q_OBJECT
 public:
  explicit FrontierChart(QWidget* parent = nullptr);
  void showAdvice(const plab::Advice& advice);
  // The points drawn (candidates that were confirmed), for tests.
  int pointCount() const;
  QCPGraph* chosenGraph() const { return chosen_; }
  QCPItemStraightLine* toleranceLine() const { return tolerance_; }

 private:
  QCPGraph* others_;
  QCPGraph* chosen_;
  QCPErrorBars* errors_;
  QCPItemStraightLine* tolerance_;
  QList<QCPItemText*> labels_;
};

}  // namespace plab::ui
