#include "main_window.h"

#include <QCheckBox>
#include <QApplication>
#include <QComboBox>
#include <QTimer>
#include <QCloseEvent>
#include <QDateTime>
#include <QFileDialog>
#include <QFontDatabase>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTabWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <filesystem>

#include "charts/chart_panel.h"
#include "comparison/comparison_table.h"
#include "panels/dataset_panel.h"
#include "panels/layer_measurements.h"
#include "panels/layer_tree_panel.h"
#include "panels/model_picker.h"
#include "panels/optimizer_panel.h"
#include "panels/welcome_panel.h"
#include "report/fp32_twin.h"
#include "report/report_export.h"
#include "run/run_config_check.h"
#include "run/run_details.h"
#include "util/background_task.h"
#include "util/errors.h"
#include "util/format.h"
#include "util/run_folder.h"

namespace plab::ui {
namespace {

// Pages scroll instead of squashing, so the window fits half of a 1920-pixel
// screen (issue 11: small windows).
QScrollArea* scrollable(QWidget* page) {
  auto* scroll = new QScrollArea;
  scroll->setWidget(page);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  return scroll;
}

// Same run, same numbers: everything but what names and places it.
nlohmann::json experimentKey(const plab::RunConfig& c) {
  nlohmann::json j = c.toJson();
  j.erase("name");
  j.erase("output_dir");
  return j;
}

}  // namespace

MainWindow::MainWindow(const QString& workspace, QWidget* parent) : QMainWindow(parent), workspace_(workspace) {
  registerMetaTypes();
  setWindowTitle("Precision Lab");
  controller_ = new RunController(&store_, this);
  controller_->setOutputRoot(workspace_.path());

  auto* splitter = new QSplitter(Qt::Horizontal);
  splitter->setObjectName("mainSplitter");
  splitter->addWidget(buildSetupPanel());
  splitter->addWidget(buildResultsPanel());
  splitter->setStretchFactor(0, 0);
  splitter->setStretchFactor(1, 1);
  splitter->setSizes({470, 1100});
  setCentralWidget(splitter);

  statusText_ = new QLabel("Ready");
  statusText_->setObjectName("statusText");
  // A long status line is cut off rather than widening the window's minimum.
  statusText_->setMinimumWidth(120);
  progress_ = new QProgressBar;
  progress_->setObjectName("runProgress");
  progress_->setMaximumWidth(260);
  progress_->setRange(0, 100);
  progress_->setValue(0);
  workspaceLabel_ = new QLabel;
  workspaceLabel_->setObjectName("workspaceLabel");
  workspaceLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  statusBar()->addWidget(statusText_, 1);
  statusBar()->addPermanentWidget(workspaceLabel_);
  statusBar()->addPermanentWidget(progress_);
  buildMenus();

  optimizerPanel_->setFrom(plab::defaultRunConfig());
  datasetPanel_->setDataConfig(plab::defaultRunConfig().data);
  layerPanel_->setPlan(plab::defaultRunConfig().plan);
  layerPanel_->setOptimizer(optimizerPanel_->mode(), optimizerPanel_->adamw());
  loader_ = new RunFolderLoader(this);
  connectSignals();
  connectExport();
  loadWorkspace();
  updateButtons();
}

MainWindow::~MainWindow() {
  loader_->cancel();
  displayWrites_.reset();  // waits for display.json writes in flight
  controller_->shutdown();
  // The views read store_ while Qt hides and destroys them, which happens
  // after store_ is gone unless they go first.
  delete takeCentralWidget();
  delete details_;
  details_ = nullptr;
}

QWidget* MainWindow::buildSetupPanel() {
  auto* panel = new QWidget;
  auto* layout = new QVBoxLayout(panel);
  layout->setContentsMargins(6, 6, 6, 6);

  auto* tabs = new QTabWidget;
  tabs->setObjectName("setupTabs");

  auto* modelPage = new QWidget;
  auto* modelLayout = new QVBoxLayout(modelPage);
  auto* modelBox = new QGroupBox("Model");
  auto* modelBoxLayout = new QVBoxLayout(modelBox);
  modelPicker_ = new ModelPicker;
  modelBoxLayout->addWidget(modelPicker_);
  auto* dataBox = new QGroupBox("Training data");
  auto* dataBoxLayout = new QVBoxLayout(dataBox);
  datasetPanel_ = new DatasetPanel;
  dataBoxLayout->addWidget(datasetPanel_);
  modelLayout->addWidget(modelBox);
  modelLayout->addWidget(dataBox);
  modelLayout->addStretch();
  tabs->addTab(scrollable(modelPage), "Model && data");

  layerPanel_ = new LayerTreePanel;
  tabs->addTab(scrollable(layerPanel_), "Layer precision");

  optimizerPanel_ = new OptimizerPanel;
  tabs->addTab(scrollable(optimizerPanel_), "Optimizer && training");
  layout->addWidget(tabs, 1);

  auto* buttons = new QGridLayout;
  start_ = new QPushButton("▶ Start");
  start_->setObjectName("startButton");
  start_->setDefault(true);
  pause_ = new QPushButton("Pause");
  pause_->setObjectName("pauseButton");
  stop_ = new QPushButton("■ Stop");
  stop_->setObjectName("stopButton");
  compare_ = new QPushButton("Compare all modes");
  compare_->setObjectName("compareButton");
  compare_->setToolTip("Queue the six bf16 recipes (fp32, bf16, bf16-nearest, bf16-kahan, bf16-sr, mixed) with the same "
                       "model, data, plan and seed; the fp16 recipes are chosen one by one");
  compareFormats_ = new QPushButton("Compare formats");
  compareFormats_->setObjectName("compareFormatsButton");
  compareFormats_->setToolTip("Queue this run in bf16 + Kahan with every matrix product in bf16, fp8-e4m3, mxfp8, "
                              "mxfp4 and nvfp4 (simulated), and nvfp4 with the output head in bf16; each is judged "
                              "against the bf16-GEMM run");
  queue_ = new QPushButton("Add to comparison queue");
  queue_->setObjectName("queueButton");
  export_ = new QPushButton("Export report…");
  export_->setObjectName("exportButton");
  buttons->addWidget(start_, 0, 0);
  buttons->addWidget(pause_, 0, 1);
  buttons->addWidget(stop_, 0, 2);
  buttons->addWidget(compare_, 1, 0);
  buttons->addWidget(queue_, 1, 1);
  buttons->addWidget(export_, 1, 2);
  buttons->addWidget(compareFormats_, 2, 0);
  layout->addLayout(buttons);
  startBlocked_ = new QLabel;
  startBlocked_->setObjectName("startBlocked");
  startBlocked_->setWordWrap(true);
  startBlocked_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  startBlocked_->setStyleSheet("color: #b00020;");
  startBlocked_->hide();
  layout->addWidget(startBlocked_);
  panel->setMinimumWidth(420);
  return panel;
}

QWidget* MainWindow::buildResultsPanel() {
  auto* splitter = new QSplitter(Qt::Vertical);
  splitter->setObjectName("resultsSplitter");
  details_ = new RunDetails(&store_, this);
  charts_ = new ChartPanel(&store_, details_);
  // An empty workspace shows what to do first instead of empty charts.
  welcome_ = new WelcomePanel;
  chartsOrWelcome_ = new QStackedWidget;
  chartsOrWelcome_->setObjectName("chartsOrWelcome");
  chartsOrWelcome_->addWidget(scrollable(welcome_));
  // The charts keep a readable size and scroll in a small window.
  chartsOrWelcome_->addWidget(scrollable(charts_));
  splitter->addWidget(chartsOrWelcome_);

  resultTabs_ = new QTabWidget;
  auto* comparisonPage = new QWidget;
  auto* comparisonLayout = new QVBoxLayout(comparisonPage);
  comparisonLayout->setContentsMargins(0, 0, 0, 0);
  table_ = new ComparisonTable(&store_);
  // For workspaces of dozens of runs, as W&B's run search and grouping.
  auto* filterRow = new QHBoxLayout;
  runFilter_ = new QLineEdit;
  runFilter_->setObjectName("runFilter");
  runFilter_->setClearButtonEnabled(true);
  runFilter_->setPlaceholderText("Filter: words, mode:bf16-sr lr<1e-4 model:llama seed>=3 -failed");
  runFilter_->setToolTip(
      "Runs that do not match are left out of the table, the charts and the export for this session (nothing "
      "is written).\nwords: in the name, mode, status or folder · field:value contains (numbers: equals) · "
      "field=value, field!=value · field<value, <=, >, >= on numbers · -term excludes · \"quotes\" keep "
      "spaces.\nFields: any config path (adamw.lr, data.path, plan.preset, model.path, seed, steps ...), "
      "lr, wd, model, data, format, moments, batch, seq, and status, name, folder, loss, val_loss, "
      "update_lost, rounded_away, tokens_per_s");
  filterNote_ = new QLabel;
  filterNote_->setObjectName("filterNote");
  filterNote_->setTextFormat(Qt::PlainText);
  groupBy_ = new QComboBox;
  groupBy_->setObjectName("groupBy");
  groupBy_->setEditable(true);
  groupBy_->setInsertPolicy(QComboBox::NoInsert);
  for (const char* choice : {"auto", "none", "seeds", "mode", "model", "mode, model", "adamw.lr", "plan",
                             "plan.gemm_format", "seed", "data"})
    groupBy_->addItem(choice);
  groupBy_->setToolTip("Group the runs by fields (\"mode, model\", any filter field) or by seed family "
                       "(\"seeds\": runs that differ only in the seed). auto: seed families when a config ran "
                       "on several seeds. A group row shows its count and the mean ± 95 % interval of its "
                       "runs' figures; the charts draw a group as its mean with a band");
  groupBy_->setMinimumContentsLength(10);
  filterRow->addWidget(runFilter_, 1);
  filterRow->addWidget(filterNote_);
  filterRow->addWidget(new QLabel("Group by:"));
  filterRow->addWidget(groupBy_);
  comparisonLayout->addLayout(filterRow);
  comparisonLayout->addWidget(table_, 1);
  auto* tableButtons = new QHBoxLayout;
  renameRun_ = new QPushButton("Rename…");
  renameRun_->setObjectName("renameRunButton");
  renameRun_->setToolTip("Rename the selected run (kept in its folder's display.json; the metrics stay untouched)");
  deleteRun_ = new QPushButton("Delete…");
  deleteRun_->setObjectName("deleteRunButton");
  deleteRun_->setToolTip("Move the selected finished run's folder to the trash (an opened run is only unlisted)");
  removeRun_ = new QPushButton("Remove from list");
  removeRun_->setObjectName("removeRunButton");
  removeRun_->setToolTip("Take the selected finished run (e.g. a failed one) off the table, charts and export for "
                         "this session; its folder stays and is listed again next time");
  tableButtons->addWidget(renameRun_);
  tableButtons->addWidget(deleteRun_);
  tableButtons->addWidget(removeRun_);
  auto* tickHint = new QLabel("<small>tick runs or groups to draw them; the swatch is their line</small>");
  // A hint never widens the window's minimum: in a narrow window it is cut.
  tickHint->setMinimumWidth(0);
  tickHint->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  tableButtons->addWidget(tickHint, 1);
  comparisonLayout->addLayout(tableButtons);
  resultTabs_->addTab(comparisonPage, "Comparison");
  log_ = new QPlainTextEdit;
  log_->setObjectName("logPanel");
  log_->setReadOnly(true);
  log_->setMaximumBlockCount(5000);
  log_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  resultTabs_->addTab(log_, "Log");
  splitter->addWidget(resultTabs_);
  // The table shows several rows at once (groups of a workspace), not one.
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 1);
  splitter->setSizes({660, 260});
  return splitter;
}

void MainWindow::connectSignals() {
  connect(start_, &QPushButton::clicked, this, &MainWindow::startRun);
  connect(pause_, &QPushButton::clicked, this, &MainWindow::togglePause);
  connect(stop_, &QPushButton::clicked, this, &MainWindow::stopRuns);
  connect(compare_, &QPushButton::clicked, this, &MainWindow::compareAllModes);
  connect(compareFormats_, &QPushButton::clicked, this, &MainWindow::compareFormats);
  connect(welcome_, &WelcomePanel::compareRequested, this, &MainWindow::compareDefaultExperiment);
  connect(queue_, &QPushButton::clicked, this, &MainWindow::addToQueue);
  connect(export_, &QPushButton::clicked, this, &MainWindow::exportReport);
  connect(removeRun_, &QPushButton::clicked, this, &MainWindow::removeSelectedRun);
  connect(renameRun_, &QPushButton::clicked, this, &MainWindow::renameSelectedRun);
  connect(deleteRun_, &QPushButton::clicked, this, &MainWindow::deleteSelectedRun);
  connect(table_, &ComparisonTable::visibilityRequested, this, &MainWindow::setRunsVisible);
  connect(table_, &ComparisonTable::fp32TwinRequested, this, &MainWindow::runFp32Twin);
  connect(table_, &ComparisonTable::fp32ReferenceChosen, this, &MainWindow::setFp32Reference);
  connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, &MainWindow::updateButtons);
  connect(runFilter_, &QLineEdit::textChanged, &store_, &RunStore::setFilter);
  connect(&store_, &RunStore::filterChanged, this, [this] {
    table_->refilter();
    updateFilterNote();
  });
  connect(groupBy_, &QComboBox::currentTextChanged, this, [this](const QString& text) {
    table_->setGrouping(text);
    charts_->setGrouping(table_->runModel()->grouping());
  });

  connect(modelPicker_, &ModelPicker::modelInspected, this, [this](const plab::ModelOverview& o) {
    layerPanel_->setModules(o.modules);
    showNewestMeasurements();
    statusText_->setText(QString("Model ready: %1 parameters").arg(humanCount(o.parameterCount)));
    appendLog("model: " + QString::fromStdString(o.sourceDescription) + ", " + humanCount(o.parameterCount) +
              " parameters");
  });
  connect(modelPicker_, &ModelPicker::inspectionFailed, this, [this](const QString& message) {
    layerPanel_->clearModules();
    lastError_ = message;
    statusText_->setText("Model error: " + message);
    appendLog("model error: " + message);
  });
  connect(optimizerPanel_, &OptimizerPanel::settingsChanged, this,
          [this] { layerPanel_->setOptimizer(optimizerPanel_->mode(), optimizerPanel_->adamw()); });
  connect(layerPanel_, &LayerTreePanel::suggestPlanRequested, this, &MainWindow::openAdvisor);
  // Start follows the validity of the whole setup as it is edited.
  connect(optimizerPanel_, &OptimizerPanel::inputChanged, this, &MainWindow::updateButtons);
  connect(datasetPanel_, &DatasetPanel::problemChanged, this, &MainWindow::updateButtons);
  connect(modelPicker_, &ModelPicker::modelInspected, this, &MainWindow::updateButtons);
  connect(modelPicker_, &ModelPicker::inspectionFailed, this, &MainWindow::updateButtons);
  connect(modelPicker_, &ModelPicker::selectionChanged, this, &MainWindow::updateButtons);

  // The list of runs changed: the rows (and groups) again. A run's own
  // change: its row (and what is measured against it).
  connect(&store_, &RunStore::runAdded, this, [this] {
    refreshTable();
    updateButtons();
  });
  connect(&store_, &RunStore::runsAdded, this, [this] {
    refreshTable();
    updateButtons();
  });
  connect(&store_, &RunStore::runChanged, this, [this](int run) {
    table_->refreshRun(run);
    updateButtons();
  });
  connect(&store_, &RunStore::detailLoaded, this, [this](int run) {
    if (run != layerPanelRun_) return;
    layerPanelRun_ = -1;
    layerPanel_->setMeasurements(QString::fromStdString(store_.record(run).config.name), layerMeasurements(store_.record(run)));
  });
  connect(&store_, &RunStore::runRemoved, this, [this] { layerPanelRun_ = -1; });
  connect(&store_, &RunStore::visibilityChanged, this, [this] {
    table_->runModel()->refreshChecks();
    updateButtons();
  });
  connect(&store_, &RunStore::cleared, this, [this] { layerPanelRun_ = -1; });
  connect(&store_, &RunStore::cleared, this, [this] {
    refreshTable();
    updateButtons();
  });
  connect(&store_, &RunStore::runRemoved, this, [this] {
    refreshTable();
    updateButtons();
  });
  // Steps arrive many times a second: the table follows a few times a
  // second, so that the window stays responsive while a run trains.
  stepTimer_ = new QTimer(this);
  stepTimer_->setInterval(300);
  stepTimer_->setSingleShot(true);
  connect(stepTimer_, &QTimer::timeout, this, [this] {
    std::vector<int> runs;
    runs.swap(pendingSteps_);
    for (int run : runs)
      if (run < store_.size()) {
        table_->refreshRun(run);
        updateStatus(run);
      }
  });
  connect(&store_, &RunStore::stepAppended, this, [this](int run) {
    if (std::find(pendingSteps_.begin(), pendingSteps_.end(), run) == pendingSteps_.end()) pendingSteps_.push_back(run);
    if (!stepTimer_->isActive()) stepTimer_->start();
  });
  connect(controller_, &RunController::runStarted, this, [this](int run) {
    const auto& r = store_.record(run);
    const QString where = QString::fromStdString(r.info.device) +
                          (r.info.rankMemory.size() > 1 ? QString(" × %1 processes").arg(r.info.rankMemory.size()) : QString());
    appendLog(QString("[%1] started on %2: %3 parameters, %4 in bf16, predicted state %5 (fp32 AdamW %6)")
                  .arg(QString::fromStdString(r.config.name), where,
                       humanCount(r.info.parameterCount), humanCount(r.info.bf16ParameterCount),
                       humanBytes(r.info.predictedMemory.total()), humanBytes(r.info.fp32Baseline.total())));
    updateStatus(run);
  });
  connect(controller_, &RunController::logLine, this, [this](int run, const QString& line) {
    const QString name = run >= 0 && run < store_.size() ? QString::fromStdString(store_.record(run).config.name) : "?";
    appendLog(QString("[%1] %2").arg(name, line));
  });
  connect(controller_, &RunController::runFinished, this, [this](int run) {
    const auto& r = store_.record(run);
    const QString name = QString::fromStdString(r.config.name);
    const QString status = QString::fromStdString(plab::runStatusId(r.result.status));
    QString line = QString("[%1] %2 after %3 steps").arg(name, status).arg(r.result.stepsDone);
    if (!r.result.message.empty()) line += ": " + QString::fromStdString(r.result.message);
    appendLog(line);
    statusText_->setText(line);
    if (r.result.status == plab::RunStatus::Failed)
      showError("Run failed", QString("%1 failed: %2\n%3")
                                  .arg(name, QString::fromStdString(r.result.message),
                                       r.steps.empty() ? QString("Nothing was measured; Remove from list takes it off the table.")
                                                       : QString("Its %1 measured steps are kept and can be exported.")
                                                             .arg(r.steps.size())));
    if (r.result.status == plab::RunStatus::Completed) progress_->setValue(progress_->maximum());
    indexFinishedRun(run);
    if (!r.steps.empty()) layerPanel_->setMeasurements(name, layerMeasurements(r));
    charts_->markDirty();
    updateButtons();
  });
  connect(controller_, &RunController::idle, this, &MainWindow::updateButtons);
}

void MainWindow::showNewestMeasurements() {
  // After a restart too: the newest run of this model that measured layers
  // (its per-layer records read first when it was listed without them).
  if (!modelPicker_->hasOverview()) return;
  const int run = newestMeasuredRun(store_, modelPicker_->spec());
  if (run < 0) return;
  if (details_->request(run))
    layerPanel_->setMeasurements(QString::fromStdString(store_.record(run).config.name), layerMeasurements(store_.record(run)));
  else
    layerPanelRun_ = run;
}

plab::RunConfig MainWindow::currentConfig() const {
  plab::RunConfig c = baseConfig_;
  c.model = modelPicker_->spec();
  c.data = datasetPanel_->dataConfig();
  c.plan = layerPanel_->plan();
  optimizerPanel_->applyTo(c);  // with the Advanced section: kernels, tokenizer, data.seed...
  c.resume_from.clear();
  c.output_dir.clear();
  return c;
}

QString MainWindow::nextRunName(plab::OptimizerMode mode) {
  return QString("run%1-%2").arg(++runCounter_).arg(QString::fromStdString(plab::optimizerModeId(mode)));
}

QString MainWindow::startProblem() const {
  const QString modelError = modelPicker_->errorText();
  if (!modelError.isEmpty()) return modelError;
  if (!datasetPanel_->problem().isEmpty()) return "Training data: " + datasetPanel_->problem();
  const plab::RunConfig config = currentConfig();
  // The CLI's --nproc refuses it too (checkGlobalBatch), but only once started.
  if (const int processes = optimizerPanel_->processes(); processes > 1 && config.batch_size % processes != 0)
    return QString("Batch size %1 is the global batch and must be divisible by the %2 processes (each trains "
                   "batch size / processes rows)")
        .arg(config.batch_size)
        .arg(processes);
  return runConfigProblem(config);
}

bool MainWindow::checkStartable() {
  const QString problem = startProblem();
  if (problem.isEmpty()) return true;
  showError("Cannot start", problem);
  return false;
}

void MainWindow::startRun() {
  if (controller_->isBusy() || !checkStartable()) return;
  addToQueue();
}

void MainWindow::addToQueue() {
  if (!checkStartable()) return;
  plab::RunConfig c = currentConfig();
  c.name = nextRunName(c.mode).toStdString();
  controller_->enqueue(c, optimizerPanel_->processes());
  appendLog(QString("[%1] queued").arg(QString::fromStdString(c.name)));
  updateButtons();
}

void MainWindow::compareAllModes() {
  if (!checkStartable()) return;
  const plab::RunConfig base = currentConfig();
  QStringList done;
  for (auto mode : plab::allOptimizerModes()) {
    plab::RunConfig c = base;
    c.mode = mode;
    if (findIdenticalRun(c) >= 0) done << QString::fromStdString(plab::optimizerModeId(mode));
  }
  bool rerun = false;
  if (!done.isEmpty()) {
    QMessageBox box(QMessageBox::Question, "Compare all modes",
                    QString("The workspace already has completed runs of exactly this configuration for %1.\n"
                            "Run only the missing modes, or run those again too?")
                        .arg(done.join(", ")),
                    QMessageBox::NoButton, this);
    box.setObjectName("rerunQuestion");
    QPushButton* missing = box.addButton("Run only the missing modes", QMessageBox::AcceptRole);
    QPushButton* all = box.addButton("Run all again", QMessageBox::DestructiveRole);
    box.addButton(QMessageBox::Cancel);
    box.setDefaultButton(missing);
    box.exec();
    if (box.clickedButton() != missing && box.clickedButton() != all) return;
    rerun = box.clickedButton() == all;
  }
  queueComparison(rerun);
}

void MainWindow::compareDefaultExperiment() {
  // Exactly the CLI's `run --default`, shown in the panels as what ran.
  applyConfig(plab::defaultRunConfig());
  compareAllModes();
}

void MainWindow::queueComparison(bool rerunIdentical) {
  if (!checkStartable()) return;
  const plab::RunConfig base = currentConfig();
  int queued = 0, reused = 0;
  for (auto mode : plab::allOptimizerModes()) {
    plab::RunConfig c = base;
    c.mode = mode;
    if (const int existing = rerunIdentical ? -1 : findIdenticalRun(c); existing >= 0) {
      setRunVisible(existing, true);  // the earlier result takes this mode's place
      ++reused;
      continue;
    }
    c.name = nextRunName(mode).toStdString();
    controller_->enqueue(c, optimizerPanel_->processes());
    ++queued;
  }
  appendLog(QString("queued a comparison of %1 modes (seed %2)").arg(queued).arg(base.seed) +
            (reused > 0 ? QString("; %1 modes reuse identical completed runs").arg(reused) : QString()));
  // Same batches for every mode: the difference to fp32 shows what precision
  // costs without the step-to-step noise that hides it in overlaid curves.
  charts_->differenceCheckBox()->setChecked(true);
  updateButtons();
}

void MainWindow::runFp32Twin(int run) {
  if (run < 0 || run >= store_.size()) return;
  const plab::RunConfig twin = plab::report::fp32TwinConfig(store_.record(run).config);
  controller_->enqueue(twin, optimizerPanel_->processes());
  appendLog(QString("[%1] queued: the fp32 twin of %2")
                .arg(QString::fromStdString(twin.name), QString::fromStdString(store_.record(run).config.name)));
  updateButtons();
}

int MainWindow::findIdenticalRun(const plab::RunConfig& config) const {
  const nlohmann::json key = experimentKey(config);
  for (int i = store_.size() - 1; i >= 0; --i)
    if (store_.state(i) == RunState::Completed && experimentKey(store_.record(i).config) == key) return i;
  return -1;
}

void MainWindow::togglePause() {
  if (!controller_->isBusy()) return;
  if (controller_->isPaused()) {
    controller_->resume();
    appendLog("resumed");
  } else {
    controller_->pause();
    appendLog("paused");
  }
  updateButtons();
}

void MainWindow::stopRuns() {
  if (!controller_->isBusy()) return;
  controller_->stopAll();
  statusText_->setText("Stopping…");
  updateButtons();
}

void MainWindow::updateButtons() {
  const bool busy = controller_->isBusy();
  const QString problem = startProblem();
  start_->setEnabled(!busy && problem.isEmpty());
  compare_->setEnabled(!busy && problem.isEmpty());
  compareFormats_->setEnabled(!busy && problem.isEmpty());
  welcome_->compareButton()->setEnabled(!busy && modelPicker_->errorText().isEmpty());
  chartsOrWelcome_->setCurrentIndex(store_.size() == 0 ? 0 : 1);
  queue_->setEnabled(problem.isEmpty());
  startBlocked_->setText(problem.isEmpty() ? QString() : "Cannot start: " + problem);
  startBlocked_->setVisible(!problem.isEmpty());
  pause_->setEnabled(busy && controller_->canPause());
  pause_->setToolTip(busy && !controller_->canPause()
                         ? "A run on several processes cannot pause: its ranks would time out waiting for each other "
                           "(PLAB_DIST_TIMEOUT_S). Stop ends it; its steps so far stay in its run folder."
                         : QString());
  stop_->setEnabled(busy);
  pause_->setText(controller_->isPaused() ? "Resume" : "Pause");
  export_->setEnabled(store_.size() > 0 && !reportExport_->busy());
  const int selected = selectedRun();
  removeRun_->setEnabled(!busy && selected >= 0 && store_.isFinished(selected));
  deleteRun_->setEnabled(!busy && selected >= 0 && store_.isFinished(selected));
  renameRun_->setEnabled(selected >= 0);
}

void MainWindow::refreshTable() {
  table_->refreshAll();
  charts_->setGrouping(table_->runModel()->grouping());
  updateFilterNote();
}

void MainWindow::updateFilterNote() {
  const plab::report::RunQuery& query = store_.query();
  QString note;
  if (!query.unknownFields.empty()) {
    QStringList names;
    for (const std::string& f : query.unknownFields) names << QString::fromStdString(f);
    note = QString("no such field: %1").arg(names.join(", "));
  } else if (!query.empty()) {
    int shown = 0;
    for (int i = 0; i < store_.size(); ++i) shown += store_.matchesFilter(i) ? 1 : 0;
    note = QString("%1 of %2 runs").arg(shown).arg(store_.size());
  }
  filterNote_->setText(note);
  filterNote_->setStyleSheet(query.unknownFields.empty() ? QString() : QString("color: #b00020;"));
  filterNote_->setVisible(!note.isEmpty());
}

int MainWindow::selectedRun() const { return table_->selectedRun(); }

void MainWindow::removeSelectedRun() {
  const int run = selectedRun();
  // While runs are queued the controller refers to them by index.
  if (run < 0 || controller_->isBusy()) return;
  const QString name = QString::fromStdString(store_.record(run).config.name);
  if (store_.removeRun(run)) appendLog(QString("[%1] removed").arg(name));
}

void MainWindow::updateStatus(int run) {
  if (run < 0 || run >= store_.size()) return;
  const auto& r = store_.record(run);
  const int64_t total = std::max<int64_t>(1, r.config.steps);
  if (r.steps.empty()) {
    statusText_->setText(QString("%1: starting…").arg(QString::fromStdString(r.config.name)));
    progress_->setValue(0);
    return;
  }
  const auto& m = r.steps.back();
  const double perStep = m.elapsedSeconds / static_cast<double>(std::max<int64_t>(1, m.step));
  const double eta = perStep * static_cast<double>(total - m.step);
  QString text = QString("%1 — step %2/%3 · loss %4 · %5 tok/s · ETA %6")
                     .arg(QString::fromStdString(r.config.name))
                     .arg(m.step)
                     .arg(total)
                     .arg(m.loss, 0, 'f', 4)
                     .arg(m.tokensPerSecond, 0, 'f', 0)
                     .arg(durationText(eta));
  if (controller_->queuedCount() > 0) text += QString(" · %1 queued").arg(controller_->queuedCount());
  statusText_->setText(text);
  progress_->setValue(static_cast<int>(100 * m.step / total));
}

void MainWindow::appendLog(const QString& line) {
  log_->appendPlainText(QDateTime::currentDateTime().toString("HH:mm:ss  ") + line);
}

void MainWindow::showError(const QString& title, const QString& message) {
  lastError_ = message;
  appendLog("error: " + message);
  statusText_->setText(title + ": " + message.section('\n', 0, 0));
  // Non-modal so a failing run in a queue never blocks the others.
  auto* box = new QMessageBox(QMessageBox::Warning, title, message, QMessageBox::Ok, this);
  box->setObjectName("errorBox");
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->setModal(false);
  box->show();
}

void MainWindow::closeEvent(QCloseEvent* event) {
  // Finished runs are on disk already; only a run still training is lost.
  if (controller_->isBusy()) {
    QMessageBox box(QMessageBox::Question, "Quit Precision Lab",
                    QString("A run is still training (%1 more queued). Stop it and quit?\n"
                            "The steps measured so far stay in its run folder.")
                        .arg(controller_->queuedCount()),
                    QMessageBox::Yes | QMessageBox::Cancel, this);
    box.setObjectName("quitWhileTrainingQuestion");
    box.setDefaultButton(QMessageBox::Cancel);
    if (box.exec() != QMessageBox::Yes) {
      event->ignore();
      return;
    }
    statusText_->setText("Stopping the run…");
  }
  controller_->shutdown();  // stops the run and joins the training thread
  event->accept();
}

}  // namespace plab::ui
