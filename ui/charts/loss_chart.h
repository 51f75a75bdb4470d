#pragma once
// Train loss (solid) and validation loss (dashed, dots) per run vs step,
// with an optional logarithmic y axis.
#include <vector>

#include "charts/run_chart.h"

namespace plab::ui {

class LossChart : public RunChart {
  Q_OBJECT
 public:
  explicit LossChart(QWidget* parent = nullptr);
  void showRuns(const std::vector<plab::RunRecord>& runs) override;

  void setLogScale(bool on);
  bool logScale() const;
  QCPGraph* trainGraph(int run) const;  // nullptr if the run has none yet
  QCPGraph* valGraph(int run) const;

 private:
  struct RunGraphs {
    QCPGraph* train = nullptr;
    QCPGraph* val = nullptr;
    size_t stepsShown = 0;
  };
  std::vector<RunGraphs> graphs_;
};

}  // namespace plab::ui
