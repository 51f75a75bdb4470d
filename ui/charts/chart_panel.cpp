#include "charts/chart_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>
#include <limits>

#include "charts/layer_heatmap.h"
#include "charts/loss_chart.h"
#include "charts/loss_scale_chart.h"
#include "charts/memory_chart.h"
#include "charts/rounded_away_chart.h"
#include "charts/run_legend.h"
#include "charts/update_lost_chart.h"
#include "report/fp32_twin.h"
#include "run/run_store.h"

namespace plab::ui {

ChartPanel::ChartPanel(const RunStore* store, QWidget* parent) : QWidget(parent), store_(store) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);

  auto* controls = new QHBoxLayout;
  logScale_ = new QCheckBox("Log y");
  logScale_->setObjectName("logScaleLoss");
  logScale_->setToolTip("Logarithmic y axis on the loss, update-lost and rounded-away charts "
                        "(0 %, e.g. fp32's, lies below the axis; not for loss minus fp32)");
  difference_ = new QCheckBox("Loss minus fp32");
  difference_->setObjectName("lossMinusFp32");
  difference_->setToolTip("Each run's loss minus the loss of its fp32 twin (the fp32 run with the same config "
                          "except mode and plan; the legend names it), "
                          "at the same step (same batches, so the noise cancels)");
  heatmapMetric_ = new QComboBox;
  heatmapMetric_->setObjectName("heatmapMetric");
  heatmapMetric_->addItem("update lost (window)", int(HeatmapMetric::UpdateLost));
  heatmapMetric_->addItem("rounded away (step)", int(HeatmapMetric::RoundedAway));
  heatmapMetric_->addItem("fp16 gradients flushed to zero (step)", int(HeatmapMetric::Fp16GradFlush));
  heatmapMetric_->addItem("fp16 gradients zero (step)", int(HeatmapMetric::Fp16GradZero));
  heatmapMetric_->addItem("GEMM underflow: input", int(HeatmapMetric::GemmUnderflowInput));
  heatmapMetric_->addItem("GEMM underflow: weight", int(HeatmapMetric::GemmUnderflowWeight));
  heatmapMetric_->addItem("GEMM underflow: output gradient", int(HeatmapMetric::GemmUnderflowGradOutput));
  heatmapMetric_->addItem("GEMM saturation", int(HeatmapMetric::GemmSaturation));
  heatmapMetric_->addItem("GEMM relative error: input", int(HeatmapMetric::GemmRelErrorInput));
  heatmapMetric_->addItem("GEMM relative error: weight", int(HeatmapMetric::GemmRelErrorWeight));
  heatmapMetric_->addItem("GEMM relative error: output gradient", int(HeatmapMetric::GemmRelErrorGradOutput));
  heatmapRun_ = new QComboBox;
  heatmapRun_->setObjectName("heatmapRun");
  heatmapRun_->setMinimumContentsLength(12);
  heatmapRun_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  follow_ = new QCheckBox("Follow");
  follow_->setObjectName("followNewData");
  follow_->setChecked(true);
  follow_->setToolTip("Refit the charts as new steps arrive; zooming or panning a chart turns this off");
  smoothing_ = new QSlider(Qt::Horizontal);
  smoothing_->setObjectName("lossSmoothing");
  smoothing_->setRange(0, 99);
  smoothing_->setMaximumWidth(80);
  smoothing_->setToolTip("EMA smoothing of the train loss (the raw curve stays faint behind)");
  auto* smoothingLabel = new QLabel("Smooth 0.00");
  xAxis_ = new QComboBox;
  xAxis_->setObjectName("xAxisKind");
  xAxis_->addItem("x: steps", int(XAxisKind::Steps));
  xAxis_->addItem("x: tokens", int(XAxisKind::Tokens));
  xAxis_->addItem("x: wall time", int(XAxisKind::WallTime));
  logX_ = new QCheckBox("Log x");
  logX_->setObjectName("logX");
  heatmapScale_ = new QComboBox;
  heatmapScale_->setObjectName("heatmapScale");
  heatmapScale_->setToolTip("Colour scale of the heatmap, the same for every run (not fitted to the data)");
  for (double max : {100.0, 50.0, 20.0, 10.0, 5.0, 1.0}) heatmapScale_->addItem(QString("0–%1 %").arg(max), max);
  auto* reset = new QPushButton("Reset zoom");
  controls->addWidget(xAxis_);
  controls->addWidget(logX_);
  controls->addWidget(logScale_);
  controls->addWidget(difference_);
  controls->addWidget(smoothingLabel);
  controls->addWidget(smoothing_);
  controls->addWidget(follow_);
  controls->addStretch();
  controls->addWidget(reset);
  reset->setToolTip("Drag: pan · wheel: zoom · hover: every run's value · right-click a chart: export PNG or PDF");
  layout->addLayout(controls);

  // The legend shares its row with the heatmap's controls.
  auto* second = new QHBoxLayout;
  legend_ = new RunLegend;
  second->addWidget(legend_, 1);
  second->addWidget(new QLabel("Heatmap:"));
  second->addWidget(heatmapMetric_);
  second->addWidget(heatmapRun_);
  second->addWidget(heatmapScale_);
  layout->addLayout(second);

  auto* grid = new QGridLayout;
  grid->setSpacing(4);
  loss_ = new LossChart;
  memory_ = new MemoryChart;
  rounded_ = new RoundedAwayChart;
  updateLost_ = new UpdateLostChart;
  heatmap_ = new LayerHeatmap;
  lossScale_ = new LossScaleChart;
  lossScale_->setVisible(false);  // until a shown run scales its loss (fp16-mixed)
  grid->addWidget(loss_, 0, 0);
  grid->addWidget(updateLost_, 0, 1);
  grid->addWidget(rounded_, 0, 2);
  grid->addWidget(memory_, 1, 0);
  grid->addWidget(heatmap_, 1, 1, 1, 2);
  grid->addWidget(lossScale_, 2, 0, 1, 3);
  // One legend above the charts instead of one per chart (the memory
  // chart's legend names its bar parts and stays).
  for (RunChart* c : {static_cast<RunChart*>(loss_), static_cast<RunChart*>(updateLost_),
                      static_cast<RunChart*>(rounded_),
                      static_cast<RunChart*>(lossScale_)})
    c->setLegendShown(false);
  layout->addLayout(grid, 1);

  updateRunChoices();
  timer_ = new QTimer(this);
  timer_->setInterval(100);
  connect(timer_, &QTimer::timeout, this, [this] {
    if (dirty_) refreshNow();
  });
  timer_->start();
  markDirty();  // first draw shows the empty state (no stray legends)

  connect(logScale_, &QCheckBox::toggled, this, [this](bool on) {
    if (!difference_->isChecked()) loss_->setLogScale(on);
    updateLost_->setLogY(on);
    rounded_->setLogY(on);
  });
  connect(difference_, &QCheckBox::toggled, this, [this](bool on) {
    loss_->setDifferenceFromFp32(on);  // differences go negative: linear
    legend_->setDifferenceFromFp32(on);
    if (!on) loss_->setLogScale(logScale_->isChecked());
    refreshNow();
    loss_->resetView();
  });
  connect(heatmapMetric_, &QComboBox::currentIndexChanged, this, [this] {
    heatmap_->setMetric(HeatmapMetric(heatmapMetric_->currentData().toInt()));
    refreshNow();
    heatmap_->resetView();
  });
  connect(heatmapRun_, &QComboBox::currentIndexChanged, this, [this] {
    refreshNow();
    heatmap_->resetView();
  });
  connect(smoothing_, &QSlider::valueChanged, this, [this, smoothingLabel](int value) {
    smoothingLabel->setText(QString("Smooth %1").arg(value / 100.0, 0, 'f', 2));
    loss_->setSmoothing(value / 100.0);
    refreshNow();
  });
  // Smoothed by default, as TensorBoard does (0.6): step-to-step batch noise
  // hides a 0.05-nat gap in the raw curves.
  smoothing_->setValue(60);
  connect(xAxis_, &QComboBox::currentIndexChanged, this, [this] {
    for (RunChart* c : charts()) {
      c->setXAxisKind(XAxisKind(xAxis_->currentData().toInt()));
      c->showRuns({});  // every key changes: draw again
    }
    refreshNow();
    for (RunChart* c : charts()) c->resetView();
  });
  connect(logX_, &QCheckBox::toggled, this, [this](bool on) {
    for (RunChart* c : charts()) c->setLogX(on);
  });
  connect(heatmapScale_, &QComboBox::currentIndexChanged, this,
          [this] { heatmap_->setScaleMax(heatmapScale_->currentData().toDouble()); });
  connect(follow_, &QCheckBox::toggled, this, [this](bool on) {
    for (RunChart* c : charts()) c->setFollow(on);
  });
  for (RunChart* c : charts())
    connect(c, &RunChart::followStopped, follow_, [this] { follow_->setChecked(false); });
  connect(reset, &QPushButton::clicked, this, [this] {
    follow_->setChecked(true);
    for (RunChart* c : charts()) c->resetView();
  });
  connect(store_, &RunStore::runAdded, this, [this] { updateRunChoices(); markDirty(); });
  // A rename or a run shown/hidden changes the heatmap's choices too.
  connect(store_, &RunStore::runChanged, this, [this] { updateRunChoices(); markDirty(); });
  connect(store_, &RunStore::stepAppended, this, &ChartPanel::markDirty);
  connect(store_, &RunStore::cleared, this, [this] { updateRunChoices(); markDirty(); });
  connect(store_, &RunStore::runRemoved, this, [this] { updateRunChoices(); markDirty(); });
  connect(store_, &RunStore::filterChanged, this, [this] { updateRunChoices(); markDirty(); });
}

void ChartPanel::markDirty() { dirty_ = true; }

void ChartPanel::refreshNow() {
  dirty_ = false;
  const std::vector<int> visible = store_->visibleRuns();
  // The charts key their curves by position: when the shown runs change,
  // they start over instead of appending to another run's curve.
  if (visible != shownRuns_) {
    for (RunChart* c : charts()) c->showRuns({});
    shownRuns_ = visible;
  }
  const int selected = heatmapRun_->currentData().toInt();
  const auto at = std::find(visible.begin(), visible.end(), selected);
  heatmap_->setSelectedRun(at == visible.end() ? -1 : static_cast<int>(at - visible.begin()));
  std::vector<qint64> starts;  // "latest run" is the one started last
  for (int i : visible)
    starts.push_back(store_->started(i).isValid() ? store_->started(i).toMSecsSinceEpoch() : std::numeric_limits<qint64>::max());
  heatmap_->setRunStarts(std::move(starts));
  // Copy only when some run is hidden: the common case draws from the store.
  if (static_cast<int>(visible.size()) == store_->size()) {
    showRuns(store_->records());
  } else {
    showRuns(store_->visibleRecords());
  }
}

void ChartPanel::showRuns(const std::vector<plab::RunRecord>& runs) {
  for (RunChart* c : charts()) c->showRuns(runs);
  legend_->showRuns(runs);
  lossScale_->setVisible(LossScaleChart::anyRunScalesLoss(runs));
}

std::vector<RunChart*> ChartPanel::charts() const {
  return {loss_, updateLost_, rounded_, memory_, heatmap_, lossScale_};
}

void ChartPanel::updateRunChoices() {
  const int selected = heatmapRun_->currentData().isValid() ? heatmapRun_->currentData().toInt() : -1;
  const QSignalBlocker block(heatmapRun_);
  heatmapRun_->clear();
  heatmapRun_->addItem("latest run", -1);
  for (int i : store_->visibleRuns())
    heatmapRun_->addItem(QString::fromStdString(plab::report::runLabel(store_->records(), static_cast<size_t>(i))), i);
  const int index = heatmapRun_->findData(selected);
  heatmapRun_->setCurrentIndex(index >= 0 ? index : 0);
}

}  // namespace plab::ui
