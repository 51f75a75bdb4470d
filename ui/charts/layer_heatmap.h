#pragma once
// Per-layer statistics of one run as a layer × step color map: the share
// rounded away in single steps, or the windowed update lost. The colour
// scale is 0..max % with max chosen by the user (100 by default), the same
// for every run and metric, never rescaled to the data, so that runs
// compare by colour.
//
// Update-lost cells whose figure is noise at the layer's size (no evidence:
// precision/update_stats.h, lostEvidence) are grey instead of coloured; cells
// not measured show a hatched background, and 0 % the scale's first colour
// (pale yellow), so that an fp32 run does not look empty. The tooltip of
// every cell gives its figure, ± and, where grey, why.
#include <QStringList>
#include <vector>

#include "charts/run_chart.h"

namespace plab::ui {

// Fp16GradFlush / Fp16GradZero: the fp16 modes' gradients per layer
// (step_metrics.h, LayerFp16GradMetrics), on every step.
// Gemm*: the low-precision GEMM operands' statistics (formats/gemm_operand_stats.h),
// on statistics steps: underflow (non-zero -> zero) and relative error per
// operand, saturation of the layer's most saturated operand.
enum class HeatmapMetric {
  RoundedAway,
  UpdateLost,
  Fp16GradFlush,
  Fp16GradZero,
  GemmUnderflowInput,
  GemmUnderflowWeight,
  GemmUnderflowGradOutput,
  GemmSaturation,
  GemmRelErrorInput,
  GemmRelErrorWeight,
  GemmRelErrorGradOutput,
  MomentErrorM,  // quantized moment stores: ||stored - exact|| / ||exact|| of m per window
  MomentErrorV,  // likewise of v
};

class LayerHeatmap : public RunChart {
  Q_OBJECT
 public:
  explicit LayerHeatmap(QWidget* parent = nullptr);
  // One run: the selected one among the series' runs (a group's runs one by one).
  void showSeries(const std::vector<ChartSeries>& series) override;

  void setSelectedRun(int run);  // -1: the latest run (runStarts) that has layer stats
  // When each run of the next showSeries started (ms since the epoch, one per
  // run; a run not started yet: the largest). Without them, list order.
  void setRunStarts(std::vector<qint64> starts) { starts_ = std::move(starts); }
  void setMetric(HeatmapMetric metric);
  void setScaleMax(double percent);  // values above it show in the darkest colour
  double scaleMax() const { return scaleMax_; }
  HeatmapMetric metric() const { return metric_; }
  int selectedRun() const { return selected_; }
  int shownRun() const { return shown_; }
  QCPColorMap* colorMap() const { return map_; }      // NaN: not measured, or no evidence
  QCPColorMap* noEvidenceMap() const { return noEvidence_; }  // set (not NaN) where a cell is grey
  const QStringList& layerNames() const { return layers_; }
  // The cell of the x-th shown step column and the y-th layer row: whether
  // it shows a coloured figure, and its tooltip (empty where nothing was measured).
  bool cellHasEvidence(int column, int row) const;
  QString cellToolTip(int column, int row) const;

 protected:
  void fitView() override;
  void resizeEvent(QResizeEvent* event) override;
  bool plotsSteps() const override { return false; }  // always per step

 private:
  void labelLayers();  // as many layer names as the plot's height lets stand apart
  QCPColorMap* map_;
  QCPColorMap* noEvidence_;  // grey where a figure is noise (drawn over map_)
  QCPColorScale* scale_;
  QSharedPointer<QCPAxisTickerText> layerTicker_;
  QStringList layers_;
  struct Cell {
    bool measured = false, evidence = true;
    QString toolTip;
  };
  std::vector<std::vector<Cell>> cells_;  // [column][row]
  int selected_ = -1;
  std::vector<qint64> starts_;
  HeatmapMetric metric_ = HeatmapMetric::UpdateLost;
  int shown_ = -1;
  double scaleMax_ = 100;
};

}  // namespace plab::ui
