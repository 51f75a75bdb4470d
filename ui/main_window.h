#pragma once
// The desktop application: setup on the left (model, data, layer plan,
// optimizer, run buttons), live charts, comparison table and log on the
// right. Training runs on the RunController's thread; the UI never blocks.
#include <QMainWindow>

#include "run/run_controller.h"
#include "run/run_store.h"

class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QTabWidget;

namespace plab::ui {

class ChartPanel;
class ComparisonTable;
class DatasetPanel;
class LayerTreePanel;
class ModelPicker;
class OptimizerPanel;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // The run the Start button would launch (name left for the caller).
  plab::RunConfig currentConfig() const;

  // Writes the session's runs (JSON/CSV/HTML, PNG charts, report.pdf) into
  // dir. Errors are shown to the user; returns false then.
  bool exportReportTo(const QString& dir);

  RunStore* store() { return &store_; }
  RunController* controller() { return controller_; }
  ModelPicker* modelPicker() const { return modelPicker_; }
  DatasetPanel* datasetPanel() const { return datasetPanel_; }
  LayerTreePanel* layerPanel() const { return layerPanel_; }
  OptimizerPanel* optimizerPanel() const { return optimizerPanel_; }
  ChartPanel* chartPanel() const { return charts_; }
  ComparisonTable* comparisonTable() const { return table_; }
  QPushButton* startButton() const { return start_; }
  QPushButton* pauseButton() const { return pause_; }
  QPushButton* stopButton() const { return stop_; }
  QPushButton* compareButton() const { return compare_; }
  QPushButton* queueButton() const { return queue_; }
  QPushButton* exportButton() const { return export_; }
  QPushButton* removeRunButton() const { return removeRun_; }
  QLabel* startBlockedLabel() const { return startBlocked_; }
  QString lastError() const { return lastError_; }
  // Why Start is disabled: the model's, the data's or the CLI's config
  // error; empty when the current setup can run.
  QString startProblem() const;

 public slots:
  void startRun();
  void togglePause();
  void stopRuns();
  void compareAllModes();
  void addToQueue();
  void exportReport();
  void removeSelectedRun();  // the comparison table's selected run, once finished

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  QWidget* buildSetupPanel();
  QWidget* buildResultsPanel();
  void connectSignals();
  void updateButtons();
  void updateStatus(int run);
  int selectedRun() const;  // -1 when no table row is selected
  void appendLog(const QString& line);
  void showError(const QString& title, const QString& message);
  bool checkStartable();  // shows startProblem() when there is one
  QString nextRunName(plab::OptimizerMode mode);

  RunStore store_;
  RunController* controller_;
  ModelPicker* modelPicker_ = nullptr;
  DatasetPanel* datasetPanel_ = nullptr;
  LayerTreePanel* layerPanel_ = nullptr;
  OptimizerPanel* optimizerPanel_ = nullptr;
  ChartPanel* charts_ = nullptr;
  ComparisonTable* table_ = nullptr;
  QTabWidget* resultTabs_ = nullptr;
  QPlainTextEdit* log_ = nullptr;
  QPushButton* start_ = nullptr;
  QPushButton* pause_ = nullptr;
  QPushButton* stop_ = nullptr;
  QPushButton* compare_ = nullptr;
  QPushButton* queue_ = nullptr;
  QPushButton* export_ = nullptr;
  QPushButton* removeRun_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* statusText_ = nullptr;
  QLabel* startBlocked_ = nullptr;
  QString lastError_;
  int runCounter_ = 0;
};

}  // namespace plab::ui
