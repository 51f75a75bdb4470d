#pragma once
// The four live charts in a grid with their controls (log-scale loss,
// heatmap run, reset zoom). Redraws from the RunStore at most ~10 times a
// second, however fast steps arrive.
#include <QWidget>

class QCheckBox;
class QComboBox;
class QTimer;

namespace plab::ui {

class LayerHeatmap;
class LossChart;
class MemoryChart;
class RoundedAwayChart;
class RunStore;

class ChartPanel : public QWidget {
  Q_OBJECT
 public:
  explicit ChartPanel(const RunStore* store, QWidget* parent = nullptr);

  void markDirty();   // new data in the store; redraw soon
  void refreshNow();  // redraw immediately (tests, export)

  LossChart* lossChart() const { return loss_; }
  MemoryChart* memoryChart() const { return memory_; }
  RoundedAwayChart* roundedAwayChart() const { return rounded_; }
  LayerHeatmap* layerHeatmap() const { return heatmap_; }
  QCheckBox* logScaleCheckBox() const { return logScale_; }

 private:
  void updateRunChoices();

  const RunStore* store_;
  LossChart* loss_;
  MemoryChart* memory_;
  RoundedAwayChart* rounded_;
  LayerHeatmap* heatmap_;
  QCheckBox* logScale_;
  QComboBox* heatmapRun_;
  QTimer* timer_;
  bool dirty_ = false;
};

}  // namespace plab::ui
