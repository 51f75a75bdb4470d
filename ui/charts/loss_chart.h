#pragma once
// Train loss (a line) and validation loss (a thin line with marks) per run vs step,
// with an optional logarithmic y axis, or each run's loss minus the loss of
// the fp32 run on the same model, data and seed at the same step. With
// smoothing on, the train curve is an EMA drawn over the faint raw curve.
#include <vector>

#include "charts/ema.h"
#include "charts/run_chart.h"
#include "report/mode_colors.h"

namespace plab::ui {

class LossChart : public RunChart {
  Q_OBJECT
 public:
  explicit LossChart(QWidget* parent = nullptr);
  void showRuns(const std::vector<plab::RunRecord>& runs) override;

  void setLogScale(bool on);
  bool logScale() const;
  // Shows loss - fp32 loss (report/fp32_comparison.h); redraw with showRuns.
  void setDifferenceFromFp32(bool on);
  bool differenceFromFp32() const { return difference_; }
  // EMA weight 0 (raw) .. 0.99 for the train curves; redraw with showRuns.
  void setSmoothing(double weight);
  double smoothing() const { return smoothing_; }
  QCPGraph* trainGraph(int run) const;  // nullptr if the run has none yet; smoothed when smoothing is on
  QCPGraph* rawGraph(int run) const;    // the unsmoothed train loss (shown faint while smoothing)
  QCPGraph* valGraph(int run) const;
  // "kahan − fp32": each run with the fp32 twin among `runs` it is drawn
  // against, "(fp32 itself)", or ": no fp32 twin shown".
  static std::vector<QString> differenceLabels(const std::vector<plab::RunRecord>& runs);

 private:
  struct RunGraphs {
    QCPGraph* train = nullptr;
    QCPGraph* raw = nullptr;
    QCPGraph* val = nullptr;
    size_t stepsShown = 0;
    Ema ema;
  };
  void clearData();
  void styleRun(RunGraphs& g, const QString& label, const plab::RunStyle& style);
  void showDifferences(const std::vector<plab::RunRecord>& runs);
  std::vector<RunGraphs> graphs_;
  bool difference_ = false;
  double smoothing_ = 0;
};

}  // namespace plab::ui
