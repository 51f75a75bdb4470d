#pragma once
// The live charts in a grid with their controls (log-scale loss, loss
// minus fp32's, heatmap metric and run, reset zoom). Redraws from the RunStore at most ~10 times a
// second, however fast steps arrive.
#include <QWidget>
#include <vector>

class QCheckBox;
class QComboBox;
class QTimer;

namespace plab::ui {

class LayerHeatmap;
class LossChart;
class MemoryChart;
class RoundedAwayChart;
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
  QCheckBox* logScaleCheckBox() const { return logScale_; }
  QCheckBox* differenceCheckBox() const { return difference_; }
  QComboBox* heatmapMetricCombo() const { return heatmapMetric_; }

 private:
  void updateRunChoices();
  std::vector<RunChart*> charts() const;

  const RunStore* store_;
  LossChart* loss_;
  MemoryChart* memory_;
  RoundedAwayChart* rounded_;
  UpdateLostChart* updateLost_;
  LayerHeatmap* heatmap_;
  QCheckBox* logScale_;
  QCheckBox* difference_;
  QComboBox* heatmapMetric_;
  QComboBox* heatmapRun_;
  QTimer* timer_;
  bool dirty_ = false;
};

}  // namespace plab::ui
