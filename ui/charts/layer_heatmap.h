#pragma once
// Per-layer statistics of one run as a layer × step color map: the share
// rounded away in single steps, or the windowed update lost. The colour
// scale is 0..max % with max chosen by the user (100 by default), the same
// for every run and metric, never rescaled to the data, so that runs
// compare by colour.
//
// Update-lost cells whose figure is noise at the layer's size (no evidence:
// precision/update_stats.h, lostEvidence) are grey instead of coloured; the
// tooltip of every cell gives its figure, ± and, where grey, why.
#include <QStringList>
#include <vector>

#include "charts/run_chart.h"

namespace plab::ui {

enum class HeatmapMetric { RoundedAway, UpdateLost };

class LayerHeatmap : public RunChart {
  Q_OBJECT
 public:
  explicit LayerHeatmap(QWidget* parent = nullptr);
  void showRuns(const std::vector<plab::RunRecord>& runs) override;

  void setSelectedRun(int run);  // -1: the last run that has layer stats
  void setMetric(HeatmapMetric metric);
  void setScaleMax(double percent);  // values above it show in the darkest colour
  double scaleMax() const { return scaleMax_; }
  HeatmapMetric metric() const { return metric_; }
  int selectedRun() const { return selected_; }
  int shownRun() const { return shown_; }
  QCPColorMap* colorMap() const { return map_; }
  const QStringList& layerNames() const { return layers_; }
  // The cell of the x-th shown step column and the y-th layer row: whether
  // it shows a coloured figure, and its tooltip (empty where nothing was measured).
  bool cellHasEvidence(int column, int row) const;
  QString cellToolTip(int column, int row) const;

 protected:
  void fitView() override;
  bool plotsSteps() const override { return false; }  // always per step

 private:
  QCPColorMap* map_;
  QCPColorScale* scale_;
  QSharedPointer<QCPAxisTickerText> layerTicker_;
  QStringList layers_;
  struct Cell {
    bool measured = false, evidence = true;
    QString toolTip;
  };
  std::vector<std::vector<Cell>> cells_;  // [column][row]
  int selected_ = -1;
  HeatmapMetric metric_ = HeatmapMetric::UpdateLost;
  int shown_ = -1;
  double scaleMax_ = 100;
};

}  // namespace plab::ui
