#pragma once
// The desktop application: setup on the left (model, data, layer plan,
// optimizer, run buttons), live charts, comparison table and log on the
// right. Training runs on the RunController's thread; the UI never blocks.
// Every run is written into its own folder in the workspace, and the
// workspace's runs are listed again when the window opens.
#include <QMainWindow>
#include <memory>

#include "run/run_controller.h"
#include "run/run_folder_loader.h"
#include "run/run_folder_writes.h"
#include "run/run_store.h"
#include "run/workspace.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QProgressDialog;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QStackedWidget;
class QTabWidget;

namespace plab::ui {

class ChartPanel;
class ComparisonTable;
class DatasetPanel;
class LayerTreePanel;
class ModelPicker;
class AdvisorDialog;
class BackgroundTasks;
class OptimizerPanel;
class ReportExport;
class RunDetails;
class WelcomePanel;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  // workspace: the folder runs are written to and listed from (created if
  // missing); the app passes Workspace::defaultPath() or the user's choice.
  explicit MainWindow(const QString& workspace, QWidget* parent = nullptr);
  ~MainWindow() override;

  // The run the Start button would launch (name left for the caller): the
  // panels' fields over the last loaded config, else the CLI's default run
  // (defaultRunConfig), so that a field without a widget never differs.
  plab::RunConfig currentConfig() const;
  // Puts a run configuration into the setup panels (Load config); the
  // fields no panel shows are kept from it.
  void applyConfig(const plab::RunConfig& config);

  QString workspacePath() const { return workspace_.path(); }
  // Lists another workspace's runs instead; refused (false) while training.
  bool setWorkspace(const QString& path);
  // Adds the runs of a run folder, a sweep folder or a folder of runs
  // (skipping those already listed); folders outside the workspace are
  // remembered. The runs are read in the background (isLoadingRuns());
  // returns how many run folders are being read; problems are shown.
  int openRunFolder(const QString& folder);
  // Runs are being read from disk (the workspace when the window opens, or
  // an opened folder); the table fills as they arrive.
  bool isLoadingRuns() const;
  // Without dialogs (the slots below ask first):
  bool saveConfigTo(const QString& file);
  bool loadConfigFrom(const QString& file);
  void renameRun(int run, const QString& name);   // stored in the run folder's display.json
  void setRunVisible(int run, bool visible);      // likewise
  void setRunsVisible(const std::vector<int>& runs, bool visible);  // a group ticked
  // The fp32 run `run` is measured against, by its folder name ("": the twin
  // rule picks); likewise stored in display.json.
  void setFp32Reference(int run, const QString& folderName);
  bool deleteRun(int run);  // moves a workspace run's folder to the trash; unlinks an opened one
  // Queues every mode; with !rerunIdentical, modes that already have a
  // completed run of exactly this configuration are shown instead.
  void queueComparison(bool rerunIdentical);
  // A completed run with exactly this configuration (name and folder
  // aside), or -1.
  int findIdenticalRun(const plab::RunConfig& config) const;

  // Starts writing the session's runs (JSON/CSV/HTML, PNG charts,
  // report.pdf) into dir in the background, with a progress dialog; returns
  // at once, false when there is nothing to export or an export is running.
  // exportFinished tells the outcome; errors are shown to the user.
  bool exportReportTo(const QString& dir);
  bool exporting() const;

  RunStore* store() { return &store_; }
  // The background writes into run folders (tests hold one to race a Delete).
  RunFolderWrites* folderWrites() { return &folderWrites_; }
  // An index.json or display.json write is running in the background.
  bool writingRunFiles() const;
  RunController* controller() { return controller_; }
  ModelPicker* modelPicker() const { return modelPicker_; }
  DatasetPanel* datasetPanel() const { return datasetPanel_; }
  LayerTreePanel* layerPanel() const { return layerPanel_; }
  OptimizerPanel* optimizerPanel() const { return optimizerPanel_; }
  ChartPanel* chartPanel() const { return charts_; }
  AdvisorDialog* advisorDialog() const { return advisor_; }  // null until opened
  WelcomePanel* welcomePanel() const { return welcome_; }
  // The welcome panel while the workspace has no run, else the charts.
  QStackedWidget* chartsOrWelcome() const { return chartsOrWelcome_; }
  ComparisonTable* comparisonTable() const { return table_; }
  QLineEdit* runFilterEdit() const { return runFilter_; }
  // "auto" (seeds of one config), "none", "seeds", "mode", "model", "mode, model", ... or any fields typed.
  QComboBox* groupByCombo() const { return groupBy_; }
  QLabel* filterNote() const { return filterNote_; }
  QPushButton* startButton() const { return start_; }
  QPushButton* pauseButton() const { return pause_; }
  QPushButton* stopButton() const { return stop_; }
  QPushButton* compareButton() const { return compare_; }
  QPushButton* compareFormatsButton() const { return compareFormats_; }
  QPushButton* queueButton() const { return queue_; }
  QPushButton* exportButton() const { return export_; }
  QPushButton* removeRunButton() const { return removeRun_; }
  QPushButton* renameRunButton() const { return renameRun_; }
  QPushButton* deleteRunButton() const { return deleteRun_; }
  QLabel* workspaceLabel() const { return workspaceLabel_; }
  QLabel* startBlockedLabel() const { return startBlocked_; }
  QString lastError() const { return lastError_; }
  // Why Start is disabled: the model's, the data's or the CLI's config
  // error; empty when the current setup can run.
  QString startProblem() const;

 signals:
  void exportFinished(const QString& dir, bool ok);

 public slots:
  void startRun();
  void togglePause();
  void stopRuns();
  void compareAllModes();
  void compareDefaultExperiment();  // the welcome panel's button: the CLI's `run --default`
  // "Compare formats" (main_window_formats.cpp): the current run in bf16-kahan
  // with every product in bf16, fp8-e4m3, mxfp8, mxfp4 and nvfp4, and nvfp4
  // with the output head in bf16 (the CLI's `run --default-formats` on these settings).
  void compareFormats();
  void runFp32Twin(int run);  // queues the fp32 twin of a run that has none
  void addToQueue();
  void exportReport();
  void removeSelectedRun();  // the comparison table's selected run, once finished
  void renameSelectedRun();
  void deleteSelectedRun();  // asks first
  void openRunDialog();
  void saveConfigDialog();
  void loadConfigDialog();
  void changeWorkspaceDialog();
  // "Suggest a plan…" (main_window_advisor.cpp): the advisor dialog on the
  // current settings; its Apply sets the candidate's mode, moments and plan.
  void openAdvisor();
  void applyAdvisedPlan(const plab::RunConfig& candidate);

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  QWidget* buildSetupPanel();
  QWidget* buildResultsPanel();
  void buildMenus();
  void loadWorkspace();
  void addLoadedRuns(std::vector<LoadedRunFolder> batch);
  void runsLoaded(int count, const QString& problem);
  void setLoadingRuns(bool loading);  // and the charts redraw less often meanwhile
  // The layer tree's measured columns: the newest run of the loaded model that measured layers.
  void showNewestMeasurements();
  void writeDisplay(int run);
  plab::RunDisplay displayOf(int run) const;
  // A run of the workspace that just ended gets its index.json (report/run_index.h), off the GUI thread.
  void indexFinishedRun(int run);
  void connectSignals();
  void connectExport();
  void updateButtons();
  void refreshTable();  // every row, in the order and with the filter chosen
  void updateFilterNote();
  void updateStatus(int run);
  int selectedRun() const;  // -1 when no run row is selected
  void appendLog(const QString& line);
  void showError(const QString& title, const QString& message);
  bool checkStartable();  // shows startProblem() when there is one
  QString nextRunName(plab::OptimizerMode mode);

  RunStore store_;
  Workspace workspace_;
  RunController* controller_;
  ModelPicker* modelPicker_ = nullptr;
  DatasetPanel* datasetPanel_ = nullptr;
  LayerTreePanel* layerPanel_ = nullptr;
  OptimizerPanel* optimizerPanel_ = nullptr;
  ChartPanel* charts_ = nullptr;
  AdvisorDialog* advisor_ = nullptr;  // created on first use, kept with its last advice
  WelcomePanel* welcome_ = nullptr;
  QStackedWidget* chartsOrWelcome_ = nullptr;
  ComparisonTable* table_ = nullptr;
  QLineEdit* runFilter_ = nullptr;
  QComboBox* groupBy_ = nullptr;
  QLabel* filterNote_ = nullptr;
  RunFolderLoader* loader_ = nullptr;
  RunDetails* details_ = nullptr;
  int layerPanelRun_ = -1;         // the run whose per-layer records the layer tree waits for
  QStringList loadProblems_;      // unreadable folders of the load in progress
  std::vector<int> pendingSteps_;  // runs with new steps since the table's last refresh
  class QTimer* stepTimer_ = nullptr;
  QTabWidget* resultTabs_ = nullptr;
  QPlainTextEdit* log_ = nullptr;
  QPushButton* start_ = nullptr;
  QPushButton* pause_ = nullptr;
  QPushButton* stop_ = nullptr;
  QPushButton* compare_ = nullptr;
  QPushButton* compareFormats_ = nullptr;
  QPushButton* queue_ = nullptr;
  QPushButton* export_ = nullptr;
  QPushButton* removeRun_ = nullptr;
  QPushButton* renameRun_ = nullptr;
  QPushButton* deleteRun_ = nullptr;
  QLabel* workspaceLabel_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* statusText_ = nullptr;
  QLabel* startBlocked_ = nullptr;
  ReportExport* reportExport_ = nullptr;
  QProgressDialog* exportProgress_ = nullptr;
  RunFolderWrites folderWrites_;  // Delete cancels the writes into a run's folder
  std::unique_ptr<BackgroundTasks> displayWrites_;  // display.json and index.json writes, off the GUI thread
  QString lastError_;
  int runCounter_ = 0;
  plab::RunConfig baseConfig_ = plab::defaultRunConfig();  // what currentConfig() starts from
  bool loadingRuns_ = false;  // the table is refreshed once after a folder's runs are added
};

}  // namespace plab::ui
