#pragma once
// The live charts in a grid with their controls (log y on the loss, update
// lost and rounded away charts; loss minus fp32's; x axis (steps, tokens,
// wall time; log), loss smoothing, follow new data, heatmap metric, run and
// colour scale, reset zoom) and one legend for all of them. Draws the runs
// the table has ticked and the filter shows, as the table groups them (a
// group: its mean with a band over its runs); more runs than a chart can
// tell apart are drawn as seed families, then by mode and format, and the
// note above the charts says so. Runs of different models or data never
// share an axis: one tab per (model, data). Redraws at most a few times a
// second, however fast steps arrive.
#include <QElapsedTimer>
#include <QWidget>
#include <string>
#include <tuple>
#include <vector>

#include "charts/chart_series.h"
#include "report/run_groups.h"
#include "report/run_report.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QSlider;
class QTabBar;
class QTimer;

namespace plab::ui {

class LayerHeatmap;
class LossChart;
class LossScaleChart;
class MemoryChart;
class RoundedAwayChart;
class RunLegend;
class RunChart;
class RunDetails;
class RunStore;
class UpdateLostChart;

class ChartPanel : public QWidget {
  Q_OBJECT
 public:
  // More lines than this in one chart are drawn as groups.
  static constexpr int kMaxLines = 12;
  // details: reads the heatmap's run's per-layer records when the run was
  // listed without them (may be null: then only runs that have them).
  ChartPanel(const RunStore* store, RunDetails* details = nullptr, QWidget* parent = nullptr);
  explicit ChartPanel(const RunStore* store, QWidget* parent) : ChartPanel(store, nullptr, parent) {}

  void markDirty();   // new data in the store; redraw soon
  void refreshNow();  // redraw immediately (tests, export)
  // While runs are being listed (a workspace opening), the charts redraw at
  // most once a second, the first a second after the listing began: every
  // batch of runs changes every group's mean, and the table, not the charts,
  // is what fills as they arrive. What was not drawn yet is drawn on the
  // first tick after the listing ends.
  void setListing(bool listing);
  // The table's grouping: a group of the table is a series of the charts.
  void setGrouping(const plab::report::Grouping& grouping);

  // What is drawn: the series (one per run or group) of the current tab,
  // the tabs' (model, data) keys and the note on what was grouped or left out.
  const std::vector<ChartSeries>& series() const { return series_; }
  QTabBar* panelTabs() const { return panelTabs_; }
  QLabel* drawNote() const { return note_; }
  QCheckBox* membersCheckBox() const { return members_; }  // a group's runs as lines too
  int heatmapStoreRun() const { return heatmapStoreRun_; }  // the store index the heatmap shows (or waits for), -1: none

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
  QComboBox* heatmapRunCombo() const { return heatmapRun_; }  // data: a store index, or -1 (the run that loses the most)
  QSlider* smoothingSlider() const { return smoothing_; }  // 0..99: EMA weight in percent

 private:
  void updateRunChoices(const std::vector<int>& drawn);
  std::vector<int> drawnRuns();  // of the current tab; sets the tabs
  void buildSeries(const std::vector<int>& drawn);
  int heatmapRun(const std::vector<int>& drawn) const;
  void showHeatmap(const std::vector<int>& drawn);  // the heatmap alone (its run's records arrived)
  std::vector<RunChart*> charts() const;

  const RunStore* store_;
  RunDetails* details_;
  plab::report::Grouping grouping_;
  std::vector<ChartSeries> series_;
  std::vector<std::string> seriesKeys_;  // what the charts' slots hold: a change starts them over
  QTabBar* panelTabs_;
  std::vector<std::string> panelKeys_;
  QLabel* note_;
  QCheckBox* members_;
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
  QTimer* timer_;
  std::vector<int> heatmapChoices_;  // the runs in the heatmap's chooser
  int heatmapStoreRun_ = -1;
  // What the heatmap drew last (run, its steps, metric, whether detailed):
  // the same again is not recomputed.
  std::tuple<int, size_t, int, bool, const void*> heatmapDrawn_{-2, 0, 0, false, nullptr};
  bool dirty_ = false;
  bool heatmapDirty_ = false;
  bool listing_ = false;
  QElapsedTimer sinceListingRedraw_;
};

}  // namespace plab::ui
