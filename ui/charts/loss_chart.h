#pragma once
// Train loss (a line) and validation loss (a thin line with marks) per
// series vs step, with an optional logarithmic y axis, or each run's loss
// minus the loss of its fp32 reference at the same step. With smoothing on,
// the train curve is an EMA drawn over the faint raw curve. A group series
// draws the mean of its runs (each smoothed first) with a band over their
// range, at the steps all of them measured.
#include <vector>

#include "charts/ema.h"
#include "charts/run_chart.h"
#include "report/mode_colors.h"

namespace plab::ui {

class LossChart : public RunChart {
  Q_OBJECT
 public:
  explicit LossChart(QWidget* parent = nullptr);
  void showSeries(const std::vector<ChartSeries>& series) override;

  void setLogScale(bool on);
  bool logScale() const;
  // Shows loss - fp32 loss (report/fp32_comparison.h); redraw with showSeries.
  void setDifferenceFromFp32(bool on);
  bool differenceFromFp32() const { return difference_; }
  // EMA weight 0 (raw) .. 0.99 for the train curves; redraw with showSeries.
  void setSmoothing(double weight);
  double smoothing() const { return smoothing_; }
  QCPGraph* trainGraph(int series) const;  // nullptr if the series has none yet; smoothed when smoothing is on
  QCPGraph* rawGraph(int series) const;    // the unsmoothed train loss (shown faint while smoothing)
  QCPGraph* valGraph(int series) const;
  QCPGraph* bandGraph(int series) const;   // a group's range (upper edge, filled down to the lower); else nullptr
  // "kahan − fp32": each series with the fp32 reference it is drawn
  // against, "(fp32 itself)", or ": no fp32 twin".
  static std::vector<QString> differenceLabels(const std::vector<ChartSeries>& series);
  static std::vector<QString> differenceLabels(const std::vector<plab::RunRecord>& runs) {
    return differenceLabels(seriesOfRuns(runs));
  }

 private:
  struct SeriesGraphs {
    QCPGraph* train = nullptr;
    QCPGraph* raw = nullptr;
    QCPGraph* val = nullptr;
    QCPGraph* low = nullptr;   // a group's band
    QCPGraph* high = nullptr;
    size_t stepsShown = 0;
    uint64_t groupVersion = 0;  // of the group drawn: unchanged, not drawn again
    Ema ema;
  };
  void clearData();
  void styleSeries(SeriesGraphs& g, const QString& label, const plab::RunStyle& style, bool group);
  void showRunDifference(SeriesGraphs& g, const ChartSeries& s);
  void showGroup(SeriesGraphs& g, const ChartSeries& s);
  std::vector<SeriesGraphs> graphs_;
  bool difference_ = false;
  double smoothing_ = 0;
};

}  // namespace plab::ui
