#pragma once
// Per-layer rounded-away fraction of one run as a layer × step color map.
#include <QStringList>
#include <vector>

#include "charts/run_chart.h"

namespace plab::ui {

class LayerHeatmap : public RunChart {
  Q_OBJECT
 public:
  explicit LayerHeatmap(QWidget* parent = nullptr);
  void showRuns(const std::vector<plab::RunRecord>& runs) override;

  void setSelectedRun(int run);  // -1: the last run that has layer stats
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
  int shown_ = -1;
};

}  // namespace plab::ui
