#pragma once
// Training-state memory per run as horizontal stacked bars of what it is
// made of (weights, gradients, AdamW moments, fp32 master weights, Kahan
// buffers), under the computed all-fp32 AdamW baseline. Each bar is in its
// run's colour (the run's name on the y axis, as many as there are runs);
// the parts are told apart by lightness and hatching, which the chart's
// legend names; beside each bar what it saves. A run on N > 1 processes
// gets one more bar per rank under its own (dashed outline): what that rank
// holds (weights and gradients replicated, the optimizer state sharded),
// named "per rank (N processes): rank 0", "rank 1", ... and its share of the
// optimizer state beside it.
#include <QStringList>
#include <array>
#include <vector>

#include "charts/run_chart.h"

namespace plab::ui {

class MemoryChart : public RunChart {
  Q_OBJECT
 public:
  static constexpr int kParts = 6;  // weights, gradients, moments, master, kahan, scales (quantized moments)
  // More series than this: the ones that save the most, and a summary row
  // for the rest (50 bars in 100 pixels read as none).
  static constexpr int kMaxBars = 12;
  explicit MemoryChart(QWidget* parent = nullptr);
  // A group: one bar (its first run's state, which a seed family shares) and
  // the mean of its runs' savings beside it.
  void showSeries(const std::vector<ChartSeries>& series) override;
  // The summary row's text when series were left out ("+N more: ..."), else "".
  QString summaryText() const { return summary_; }

  // Bar 0 is the fp32 baseline, then one per run that measured memory (MiB)
  // and, after a multi-process run's, one per rank.
  QCPBars* partBars(int part) const { return parts_[static_cast<size_t>(part)]; }
  const std::vector<double>& savedFractions() const { return saved_; }  // per run bar
  QStringList barLabels() const { return barLabels_; }    // on the y axis, from the top
  QStringList savingTexts() const { return savings_; }    // beside each run's (and rank's) bar
  std::vector<QColor> barColors() const;                  // the colour each bar is drawn in
  // The y-axis names shown: all when their rows are a line of text tall,
  // else every k-th (hovering a bar names any of them).
  QStringList shownBarLabels() const;
  bool compact() const { return compact_; }  // short: the explanation moves to the tooltip
  bool savingTextsShown() const { return textsFit_; }  // false when too narrow for them

 protected:
  void fitView() override;
  void resizeEvent(QResizeEvent* event) override;
  bool plotsSteps() const override { return false; }  // one bar per run
  QString hoverText(const QPoint& pos) const override;  // the bar's run, savings and parts in MiB

 private:
  std::array<QCPBars*, kParts> parts_{};
  std::vector<double> saved_;
  std::vector<double> totals_;  // MiB per bar
  QStringList barLabels_, savings_;
  QString summary_;
  std::vector<QCPItemText*> savingItems_;  // per bar; nullptr for the baseline
  double keyMax_ = 1;
  int labelStep_ = 1;
  bool textsFit_ = true;  // the savings beside the bars fit the plot's width
  bool compact_ = false;
  QSharedPointer<QCPAxisTickerText> ticker_;
  void setCompact(bool on);
  void thinLabels();
  void showSavingTexts();
};

}  // namespace plab::ui
