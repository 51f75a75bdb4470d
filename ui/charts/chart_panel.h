#pragma once
// The live charts in a grid with their controls (log y on the loss, update
// lost and rounded away charts; loss minus fp32's; x axis (steps, tokens,
// wall time; log), loss smoothing, follow new data, heatmap metric, run and
// colour scale, reset zoom) and one legend for all of them. Shows the store's visible runs; redraws at most ~10 times a
// second, however fast steps arrive.
#include <QWidget>
#include <vector>

#include "report/run_report.h"

class QCheckBox;
class QComboBox;
class QSlider;
class QTimer;

namespace plab::ui {

class LayerHeatmap;
class LossChart;
class LossScaleChart;
class MemoryChart;
class RoundedAwayChart;
class RunLegend;
class RunChart;
class RunStore;
class UpdateLostChart;

class ChartPanel : public QWidget {
  Q_OBJECT
 public:
  explicit ChartPanel(const RunStore* store, QWidget* parent = nullptr);

  void markDirty();   // new data in the store; redraw soon
  void refreshNow();  // redraw immediately (tests, export)

  LossChart* lossChart() const { return loss_; }
  MemoryChart* memoryChart() const { return memory_; }
  RoundedAwayChart* roundedAwayChart() const { return rounded_; }
  UpdateLostChart* updateLostChart() const { return updateLost_; }
  LayerHeatmap* layerHeatmap() const { return heatmap_; }
  LossScaleChart* lossScaleChart() const { return lossScale_; }  // shown while a run scales its loss
  RunLegend* runLegend() const { return legend_; }
  QCheckBox* logScaleCheckBox() const { return logScale_; }
  QCheckBox* differenceCheckBox() const { return difference_; }
  QComboBox* heatmapMetricCombo() const { return heatmapMetric_; }
  QCheckBox* followCheckBox() const { return follow_; }
  QCheckBox* logXCheckBox() const { return logX_; }
  QComboBox* xAxisCombo() const { return xAxis_; }            // data: int(XAxisKind)
  QComboBox* heatmapScaleCombo() const { return heatmapScale_; }  // data: the scale's maximum in %
  QSlider* smoothingSlider() const { return smoothing_; }  // 0..99: EMA weight in percent

 private:
  void updateRunChoices();
  void showRuns(const std::vector<plab::RunRecord>& runs);
  std::vector<RunChart*> charts() const;

  const RunStore* store_;
  LossChart* loss_;
  MemoryChart* memory_;
  RoundedAwayChart* rounded_;
  UpdateLostChart* updateLost_;
  LayerHeatmap* heatmap_;
  LossScaleChart* lossScale_;
  RunLegend* legend_;
  QCheckBox* logScale_;
  QCheckBox* difference_;
  QComboBox* heatmapMetric_;
  QComboBox* heatmapRun_;
  QCheckBox* follow_;
  QCheckBox* logX_;
  QComboBox* xAxis_;
  QComboBox* heatmapScale_;
  QSlider* smoothing_;
  std::vector<int> shownRuns_;  // store indices the charts show, in order
  QTimer* timer_;
  bool dirty_ = false;
};

}  // namespace plab::ui
