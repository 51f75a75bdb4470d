#include "charts/chart_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QTimer>
#include <QVBoxLayout>

#include "charts/layer_heatmap.h"
#include "charts/loss_chart.h"
#include "charts/memory_chart.h"
#include "charts/rounded_away_chart.h"
#include "charts/update_lost_chart.h"
#include "run/run_store.h"

namespace plab::ui {

ChartPanel::ChartPanel(const RunStore* store, QWidget* parent) : QWidget(parent), store_(store) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);

  auto* controls = new QHBoxLayout;
  logScale_ = new QCheckBox("Log-scale loss");
  logScale_->setObjectName("logScaleLoss");
  difference_ = new QCheckBox("Loss minus fp32");
  difference_->setObjectName("lossMinusFp32");
  difference_->setToolTip("Each run's loss minus the loss of the fp32 run on the same model, data and seed, "
                          "at the same step (same batches, so the noise cancels)");
  heatmapMetric_ = new QComboBox;
  heatmapMetric_->setObjectName("heatmapMetric");
  heatmapMetric_->addItem("update lost (window)", int(HeatmapMetric::UpdateLost));
  heatmapMetric_->addItem("rounded away (step)", int(HeatmapMetric::RoundedAway));
  heatmapRun_ = new QComboBox;
  heatmapRun_->setObjectName("heatmapRun");
  heatmapRun_->setMinimumContentsLength(18);
  heatmapRun_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  auto* reset = new QPushButton("Reset zoom");
  reset->setToolTip("Drag to pan, wheel to zoom; right-click a chart to export it as PNG or PDF");
  controls->addWidget(logScale_);
  controls->addWidget(difference_);
  controls->addSpacing(16);
  controls->addWidget(new QLabel("Heatmap:"));
  controls->addWidget(heatmapMetric_);
  controls->addWidget(heatmapRun_);
  controls->addStretch();
  controls->addWidget(new QLabel("<small>drag: pan · wheel: zoom · right-click: export</small>"));
  controls->addWidget(reset);
  layout->addLayout(controls);

  auto* grid = new QGridLayout;
  grid->setSpacing(4);
  loss_ = new LossChart;
  memory_ = new MemoryChart;
  rounded_ = new RoundedAwayChart;
  updateLost_ = new UpdateLostChart;
  heatmap_ = new LayerHeatmap;
  grid->addWidget(loss_, 0, 0);
  grid->addWidget(updateLost_, 0, 1);
  grid->addWidget(rounded_, 0, 2);
  grid->addWidget(memory_, 1, 0);
  grid->addWidget(heatmap_, 1, 1, 1, 2);
  layout->addLayout(grid, 1);

  updateRunChoices();
  timer_ = new QTimer(this);
  timer_->setInterval(100);
  connect(timer_, &QTimer::timeout, this, [this] {
    if (dirty_) refreshNow();
  });
  timer_->start();
  markDirty();  // first draw shows the empty state (no stray legends)

  connect(logScale_, &QCheckBox::toggled, loss_, &LossChart::setLogScale);
  connect(difference_, &QCheckBox::toggled, this, [this](bool on) {
    loss_->setDifferenceFromFp32(on);
    logScale_->setEnabled(!on);
    loss_->showRuns(store_->records());
    loss_->resetView();
  });
  connect(heatmapMetric_, &QComboBox::currentIndexChanged, this, [this] {
    heatmap_->setMetric(HeatmapMetric(heatmapMetric_->currentData().toInt()));
    heatmap_->showRuns(store_->records());
    heatmap_->resetView();
  });
  connect(heatmapRun_, &QComboBox::currentIndexChanged, this, [this] {
    heatmap_->setSelectedRun(heatmapRun_->currentData().toInt());
    heatmap_->showRuns(store_->records());
    heatmap_->resetView();
  });
  connect(reset, &QPushButton::clicked, this, [this] {
    for (RunChart* c : charts()) c->resetView();
  });
  connect(store_, &RunStore::runAdded, this, [this] { updateRunChoices(); markDirty(); });
  connect(store_, &RunStore::runChanged, this, &ChartPanel::markDirty);
  connect(store_, &RunStore::stepAppended, this, &ChartPanel::markDirty);
  connect(store_, &RunStore::cleared, this, [this] { updateRunChoices(); markDirty(); });
  connect(store_, &RunStore::runRemoved, this, [this] { updateRunChoices(); markDirty(); });
}

void ChartPanel::markDirty() { dirty_ = true; }

void ChartPanel::refreshNow() {
  dirty_ = false;
  const auto& runs = store_->records();
  for (RunChart* c : charts()) c->showRuns(runs);
}

std::vector<RunChart*> ChartPanel::charts() const { return {loss_, updateLost_, rounded_, memory_, heatmap_}; }

void ChartPanel::updateRunChoices() {
  const int selected = heatmapRun_->currentData().isValid() ? heatmapRun_->currentData().toInt() : -1;
  const QSignalBlocker block(heatmapRun_);
  heatmapRun_->clear();
  heatmapRun_->addItem("latest run", -1);
  for (int i = 0; i < store_->size(); ++i)
    heatmapRun_->addItem(QString::fromStdString(store_->record(i).config.name), i);
  const int index = heatmapRun_->findData(selected);
  heatmapRun_->setCurrentIndex(index >= 0 ? index : 0);
}

}  // namespace plab::ui
