#include "charts/chart_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QTabBar>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>

#include "charts/layer_heatmap.h"
#include "charts/loss_chart.h"
#include "charts/loss_scale_chart.h"
#include "charts/memory_chart.h"
#include "charts/rounded_away_chart.h"
#include "charts/run_legend.h"
#include "charts/update_lost_chart.h"
#include "report/fp32_comparison.h"
#include "report/fp32_twin.h"
#include "report/source_labels.h"
#include "run/run_details.h"
#include "run/run_store.h"

namespace plab::ui {
namespace {

// Runs of different models or data never share a loss axis: a tab each.
std::string panelKey(const plab::RunConfig& c) {
  return c.model.source + "\x1f" + c.model.path + "\x1f" + c.model.revision + "\x1e" + c.data.path;
}

QString panelLabel(const plab::RunConfig& c, int runs) {
  return QString("%1 · %2 (%3)")
      .arg(QString::fromStdString(plab::report::modelSourceLabel(c.model.source, c.model.path)),
           QString::fromStdString(plab::report::dataSourceLabel(c.data.path)))
      .arg(runs);
}

// The runs' names without the prefix they share, cut at the end.
std::vector<QString> shortLabels(std::vector<QString> labels) {
  if (labels.size() > 1) {
    QString prefix = labels.front();
    for (const QString& l : labels)
      while (!l.startsWith(prefix)) prefix.chop(1);
    while (!prefix.isEmpty() && !QString("-_ ").contains(prefix.back())) prefix.chop(1);
    if (!prefix.isEmpty() && std::all_of(labels.begin(), labels.end(), [&](const QString& l) { return l.size() > prefix.size(); }))
      for (QString& l : labels) l = l.mid(prefix.size());
  }
  for (QString& l : labels)
    if (l.size() > 28) l = l.left(27) + "…";
  return labels;
}

// Whether a run can have the heatmap's metric at all.
bool mayHaveMetric(const plab::RunConfig& c, HeatmapMetric metric) {
  switch (metric) {
    case HeatmapMetric::Fp16GradFlush:
    case HeatmapMetric::Fp16GradZero:
      return c.mode == plab::OptimizerMode::Fp16Plain || c.mode == plab::OptimizerMode::Fp16Mixed;
    case HeatmapMetric::RoundedAway:
    case HeatmapMetric::UpdateLost: return true;
    case HeatmapMetric::MomentErrorM:
    case HeatmapMetric::MomentErrorV: return plab::momentsQuantized(c.adamw.moments);
    default: return c.plan.usesLowPrecisionGemms();
  }
}

}  // namespace

ChartPanel::ChartPanel(const RunStore* store, RunDetails* details, QWidget* parent)
    : QWidget(parent), store_(store), details_(details) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);

  // One tab per (model, data) among the drawn runs; hidden while there is one.
  panelTabs_ = new QTabBar;
  panelTabs_->setObjectName("chartPanelTabs");
  panelTabs_->setExpanding(false);
  panelTabs_->setDocumentMode(true);
  panelTabs_->setToolTip("Runs of different models or data are never drawn on one axis: one tab each");
  panelTabs_->hide();
  layout->addWidget(panelTabs_);

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
  heatmapMetric_->addItem("moment error: m (window)", int(HeatmapMetric::MomentErrorM));
  heatmapMetric_->addItem("moment error: v (window)", int(HeatmapMetric::MomentErrorV));
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
  members_ = new QCheckBox("Group runs as lines");
  members_->setObjectName("groupMembersAsLines");
  members_->setToolTip("Draw each run of a group as its own line instead of the group's mean and band "
                       "(at most a dozen lines per chart)");
  controls->addWidget(xAxis_);
  controls->addWidget(logX_);
  controls->addWidget(logScale_);
  controls->addWidget(difference_);
  controls->addWidget(smoothingLabel);
  controls->addWidget(smoothing_);
  controls->addWidget(follow_);
  controls->addWidget(members_);
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
  note_ = new QLabel;
  note_->setObjectName("chartDrawNote");
  note_->setWordWrap(true);
  note_->setStyleSheet("color: #555;");
  note_->hide();
  layout->addWidget(note_);

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

  updateRunChoices({});
  timer_ = new QTimer(this);
  // A few redraws a second keep the window responsive while a run trains.
  timer_->setInterval(250);
  connect(timer_, &QTimer::timeout, this, [this] {
    if (!dirty_ && heatmapDirty_) {
      heatmapDirty_ = false;
      showHeatmap(drawnRuns());
      return;
    }
    if (!dirty_) return;
    if (listing_) {
      if (sinceListingRedraw_.isValid() && sinceListingRedraw_.elapsed() < 1000) return;
      sinceListingRedraw_.restart();
    }
    refreshNow();
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
    heatmapDrawn_ = std::make_tuple(-2, size_t(0), 0, false, static_cast<const void*>(nullptr));
    heatmap_->setMetric(HeatmapMetric(heatmapMetric_->currentData().toInt()));
    refreshNow();
    heatmap_->resetView();
  });
  connect(heatmapRun_, &QComboBox::currentIndexChanged, this, [this] {
    refreshNow();
    heatmap_->resetView();
  });
  connect(panelTabs_, &QTabBar::currentChanged, this, [this] {
    refreshNow();
    for (RunChart* c : charts()) c->resetView();
  });
  connect(members_, &QCheckBox::toggled, this, [this] { refreshNow(); });
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
      c->showSeries({});  // every key changes: draw again
    }
    heatmapDrawn_ = std::make_tuple(-2, size_t(0), 0, false, static_cast<const void*>(nullptr));
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
  for (auto signal : {&RunStore::runAdded, &RunStore::runChanged, &RunStore::stepAppended, &RunStore::runRemoved})
    connect(store_, signal, this, &ChartPanel::markDirty);
  // Per-layer records arriving change only what the heatmap can draw.
  connect(store_, &RunStore::detailLoaded, this, [this] { heatmapDirty_ = true; });
  connect(store_, &RunStore::runsAdded, this, &ChartPanel::markDirty);
  connect(store_, &RunStore::visibilityChanged, this, &ChartPanel::markDirty);
  connect(store_, &RunStore::cleared, this, &ChartPanel::markDirty);
  connect(store_, &RunStore::filterChanged, this, &ChartPanel::markDirty);
}

void ChartPanel::setGrouping(const plab::report::Grouping& grouping) {
  if (grouping == grouping_) return;
  grouping_ = grouping;
  markDirty();
}

void ChartPanel::markDirty() { dirty_ = true; }

void ChartPanel::setListing(bool listing) {
  if (listing == listing_) return;
  listing_ = listing;
  // The first redraw a second into the listing (a thousand runs are listed
  // by then); what arrived and was not drawn stays marked dirty.
  sinceListingRedraw_.restart();
}

void ChartPanel::refreshNow() {
  dirty_ = false;
  const std::vector<int> drawn = drawnRuns();
  buildSeries(drawn);
  updateRunChoices(drawn);
  // The charts key their curves by position: when the series change, they
  // start over instead of appending to another series' curve.
  std::vector<std::string> keys;
  for (const ChartSeries& s : series_) {
    std::string key = s.label.toStdString();
    for (const plab::RunRecord* r : s.runs) key += "\x1f" + r->config.output_dir + "\x1f" + r->config.name;
    keys.push_back(std::move(key));
  }
  if (keys != seriesKeys_) {
    for (RunChart* c : charts()) c->showSeries({});
    heatmapDrawn_ = std::make_tuple(-2, size_t(0), 0, false, static_cast<const void*>(nullptr));
    seriesKeys_ = std::move(keys);
  }
  for (RunChart* c : {static_cast<RunChart*>(loss_), static_cast<RunChart*>(updateLost_),
                      static_cast<RunChart*>(rounded_), static_cast<RunChart*>(memory_)})
    c->showSeries(series_);
  // The loss-scale chart draws a group's runs one by one, a graph each: it
  // gets them only while one scales its loss (1,000 graphs that draw nothing
  // froze the window ~0.8 s per group change).
  const bool scalesLoss = LossScaleChart::anyRunScalesLoss(series_);
  lossScale_->showSeries(scalesLoss ? series_ : std::vector<ChartSeries>{});
  legend_->showSeries(series_);
  lossScale_->setVisible(scalesLoss);

  showHeatmap(drawn);
}

void ChartPanel::showHeatmap(const std::vector<int>& drawn) {
  heatmapDirty_ = false;
  // The heatmap: one run, the chosen one or the one that loses the most,
  // with its per-layer records (read in the background when listed without).
  const int run = heatmapRun(drawn);
  heatmapStoreRun_ = run;
  heatmap_->setSelectedRun(run >= 0 ? 0 : -1);
  std::vector<ChartSeries> one;
  if (run >= 0) {
    const bool ready = !details_ || details_->request(run) || store_->isDetailed(run);
    if (ready) {
      ChartSeries s;
      s.label = s.name = QString::fromStdString(store_->relations().labels[static_cast<size_t>(run)]);
      s.style = store_->relations().styles[static_cast<size_t>(run)];
      s.runs = {&store_->record(run)};
      s.twins = {nullptr};
      s.twinLabels = {QString()};
      s.twinsChosen = {false};
      one.push_back(std::move(s));
    }
  }
  const auto drawnKey = std::make_tuple(run, run >= 0 ? store_->record(run).steps.size() : size_t(0),
                                        int(heatmap_->metric()), run >= 0 && store_->isDetailed(run),
                                        run >= 0 ? static_cast<const void*>(&store_->record(run)) : nullptr);
  if (drawnKey == heatmapDrawn_ && !one.empty()) return;
  heatmapDrawn_ = one.empty() ? std::make_tuple(-2, size_t(0), 0, false, static_cast<const void*>(nullptr)) : drawnKey;
  heatmap_->showSeries({});
  heatmap_->showSeries(one);
}

std::vector<int> ChartPanel::drawnRuns() {
  const std::vector<int> visible = store_->visibleRuns();
  // Tabs: one per (model, data), in order of their first run.
  std::vector<std::string> keys;
  std::map<std::string, std::pair<int, int>> count;  // key -> (runs, first run)
  for (int i : visible) {
    const std::string key = panelKey(store_->record(i).config);
    auto [it, added] = count.emplace(key, std::make_pair(0, i));
    if (added) keys.push_back(key);
    ++it->second.first;
  }
  const std::string current = panelTabs_->currentIndex() >= 0 && panelTabs_->currentIndex() < static_cast<int>(panelKeys_.size())
                                  ? panelKeys_[static_cast<size_t>(panelTabs_->currentIndex())]
                                  : std::string();
  if (keys != panelKeys_ || panelTabs_->count() != static_cast<int>(keys.size())) {
    const QSignalBlocker block(panelTabs_);
    while (panelTabs_->count() > 0) panelTabs_->removeTab(0);
    for (const std::string& key : keys)
      panelTabs_->addTab(panelLabel(store_->record(count[key].second).config, count[key].first));
    panelKeys_ = keys;
    const auto at = std::find(keys.begin(), keys.end(), current);
    panelTabs_->setCurrentIndex(at == keys.end() ? 0 : static_cast<int>(at - keys.begin()));
  } else {
    for (size_t t = 0; t < keys.size(); ++t)
      panelTabs_->setTabText(static_cast<int>(t), panelLabel(store_->record(count[keys[t]].second).config, count[keys[t]].first));
  }
  panelTabs_->setVisible(keys.size() > 1);
  if (keys.size() <= 1) return visible;
  const std::string shown = panelKeys_[static_cast<size_t>(std::max(panelTabs_->currentIndex(), 0))];
  std::vector<int> out;
  for (int i : visible)
    if (panelKey(store_->record(i).config) == shown) out.push_back(i);
  return out;
}

void ChartPanel::buildSeries(const std::vector<int>& drawn) {
  const auto& records = store_->records();
  const auto& relations = store_->relations();
  std::vector<size_t> runs(drawn.begin(), drawn.end());
  std::vector<const plab::report::RunFields*> fields(records.size(), nullptr);
  const auto group = [&](const plab::report::Grouping& g) {
    if (g.kind == plab::report::Grouping::Kind::Fields)
      for (size_t i : runs) fields[i] = &store_->fields(static_cast<int>(i));
    return plab::report::groupRuns(records, fields, relations, runs, g);
  };
  QString note;
  plab::report::Grouping grouping = grouping_;
  std::vector<plab::report::RunGroup> groups = group(grouping);
  // Too many lines to tell apart: seed families, then mode and format.
  if (static_cast<int>(groups.size()) > kMaxLines && grouping.kind != plab::report::Grouping::Kind::SeedFamily) {
    plab::report::Grouping families;
    families.kind = plab::report::Grouping::Kind::SeedFamily;
    auto byFamily = group(families);
    if (byFamily.size() < groups.size()) {
      grouping = families;
      groups = std::move(byFamily);
    }
  }
  if (static_cast<int>(groups.size()) > kMaxLines) {
    grouping = plab::report::parseGrouping("mode, plan.gemm_format");
    groups = group(grouping);
  }
  if (grouping != grouping_)
    note = QString("%1 runs drawn as %2 groups (%3): each is the mean of its runs with a band over their range. "
                   "Group or filter the table to draw fewer.")
               .arg(runs.size())
               .arg(groups.size())
               .arg(grouping.kind == plab::report::Grouping::Kind::SeedFamily ? "seeds of one config"
                                                                                : "by mode and GEMM format");
  // On demand, a group's runs as lines (while they stay few enough to tell apart).
  if (members_->isChecked()) {
    if (runs.size() <= static_cast<size_t>(kMaxLines)) {
      std::vector<plab::report::RunGroup> each;
      for (const auto& g : groups)
        for (size_t r : g.members) each.push_back({g.key, relations.labels[r], {r}});
      groups = std::move(each);
    } else {
      note += (note.isEmpty() ? "" : " ") +
              QString("%1 runs are too many to draw as lines: their groups are drawn.").arg(runs.size());
    }
  }
  std::vector<QString> labels;
  for (const auto& g : groups)
    labels.push_back(g.members.size() == 1 ? QString::fromStdString(relations.labels[g.members.front()])
                                           : QString("%1 (%2 runs)").arg(QString::fromStdString(g.label)).arg(g.members.size()));
  const std::vector<QString> names = labels;
  labels = shortLabels(labels);
  std::vector<QString> twinLabels(records.size());
  series_.clear();
  for (size_t k = 0; k < groups.size(); ++k) {
    ChartSeries s;
    s.label = labels[k];
    s.name = names[k];
    s.style = relations.styles[groups[k].members.front()];
    for (size_t r : groups[k].members) {
      s.runs.push_back(&records[r]);
      // The reference may be any run of the workspace, drawn or filtered out.
      const auto twin = relations.twins[r];
      s.twins.push_back(twin ? &records[*twin] : nullptr);
      s.twinLabels.push_back(twin ? QString::fromStdString(relations.labels[*twin]) : QString());
      s.twinsChosen.push_back(!records[r].fp32Reference.empty());
    }
    series_.push_back(std::move(s));
  }
  note_->setText(note);
  note_->setVisible(!note.isEmpty());
}

int ChartPanel::heatmapRun(const std::vector<int>& drawn) const {
  const int chosen = heatmapRun_->currentData().isValid() ? heatmapRun_->currentData().toInt() : -1;
  if (chosen >= 0 && std::find(drawn.begin(), drawn.end(), chosen) != drawn.end()) return chosen;
  // By default the run that loses the most update (of the runs that can
  // have the metric), the latest started among equals.
  const HeatmapMetric metric = heatmap_->metric();
  int best = -1;
  double bestLost = -1;
  qint64 bestStart = std::numeric_limits<qint64>::min();
  for (int i : drawn) {
    const plab::RunRecord& r = store_->record(i);
    if (r.steps.empty() || !mayHaveMetric(r.config, metric)) continue;
    const double lost = plab::report::meanUpdateLost(r).value_or(0.0);
    const qint64 start = store_->started(i).isValid() ? store_->started(i).toMSecsSinceEpoch() : std::numeric_limits<qint64>::max();
    if (lost > bestLost + 1e-12 || (std::fabs(lost - bestLost) <= 1e-12 && start >= bestStart)) {
      best = i;
      bestLost = lost;
      bestStart = start;
    }
  }
  return best;
}

std::vector<RunChart*> ChartPanel::charts() const {
  return {loss_, updateLost_, rounded_, memory_, heatmap_, lossScale_};
}

void ChartPanel::updateRunChoices(const std::vector<int>& drawn) {
  if (drawn == heatmapChoices_ && heatmapRun_->count() > 0) return;
  heatmapChoices_ = drawn;
  const int selected = heatmapRun_->currentData().isValid() ? heatmapRun_->currentData().toInt() : -1;
  const QSignalBlocker block(heatmapRun_);
  heatmapRun_->clear();
  heatmapRun_->addItem("the run losing the most", -1);
  for (int i : drawn) heatmapRun_->addItem(QString::fromStdString(store_->relations().labels[static_cast<size_t>(i)]), i);
  const int index = heatmapRun_->findData(selected);
  heatmapRun_->setCurrentIndex(index >= 0 ? index : 0);
}

}  // namespace plab::ui
