#pragma once
// Per-layer statistics of one run as a layer × step color map: the share
// rounded away in single steps, or the windowed update lost. The colour
// scale is fixed at 0..100 % so that runs and metrics compare by colour.
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
  HeatmapMetric metric() const { return metric_; }
  int selectedRun() const { return selected_; }
  int shownRun() const { return shown_; }
  QCPColorMap* colorMap() const { return map_; }
  const QStringList& layerNames() const { return layers_; }

 protected:
  void fitView() override;

 private:
  QCPColorMap* map_;
  QCPColorScale* scale_;
  QSharedPointer<QCPAxisTickerText> layerTicker_;
  QStringList layers_;
  int selected_ = -1;
  HeatmapMetric metric_ = HeatmapMetric::UpdateLost;
  int shown_ = -1;
};

}  // namespace plab::ui
