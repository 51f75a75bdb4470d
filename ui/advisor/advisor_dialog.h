#pragma once
// "Suggest a plan": runs the precision advisor (advisor/advisor.h) on the
// current run settings in the background, with progress, and shows its
// frontier (memory saved against loss minus fp32), every candidate with the
// verdict (chosen, or why rejected), the quantized moment stores it tried
// (in the plan, left out or not run, and why: report.html's *Moment stores*)
// and the shadow figures per layer.
// "Apply" hands the selected candidate's mode and plan to the window (the
// chosen one is selected when the advice arrives).
#include <QDialog>
#include <utility>
#include <vector>

#include "advisor/advisor.h"
#include "run/metatypes.h"  // plab::RunConfig in a signal

class QCheckBox;
class QDoubleSpinBox;
class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace plab::ui {

class AdvisorRunner;
class FrontierChart;

class AdvisorDialog : public QDialog {
  Q_OBJECT
 public:
  explicit AdvisorDialog(const plab::RunConfig& base, QWidget* parent = nullptr);
  ~AdvisorDialog() override;

  // The settings the next Start advises on (ignored while running).
  void setBase(const plab::RunConfig& base);
  plab::AdvisorOptions options() const;  // from the fields
  void start();                          // what the Start button does
  void showAdvice(const plab::Advice& advice);
  const plab::Advice& advice() const { return advice_; }
  bool running() const;

  QSpinBox* stepsSpin() const { return steps_; }
  QSpinBox* seedsSpin() const { return seeds_; }
  QDoubleSpinBox* toleranceSpin() const { return tolerance_; }
  // The CLI's --moment-stores: one box per quantized store (8bit, 4bit,
  // fp8), all ticked by default; none ticked is `none`.
  QCheckBox* momentStoreCheck(plab::MomentPrecision store) const;
  QPushButton* startButton() const { return start_; }
  QPushButton* stopButton() const { return stop_; }
  QPushButton* applyButton() const { return apply_; }
  QPushButton* applyGemmButton() const { return applyGemm_; }
  QProgressBar* progressBar() const { return progress_; }
  QTableWidget* candidatesTable() const { return candidates_; }
  QTableWidget* layersTable() const { return layers_; }
  QTableWidget* momentStoresTable() const { return momentStores_; }
  FrontierChart* frontierChart() const { return frontier_; }
  QLabel* verdictLabel() const { return verdict_; }
  QLabel* candidateDetails() const { return details_; }  // the selected candidate, every figure and its verdict whole

 signals:
  void planApplied(const plab::RunConfig& candidate);  // mode, adamw.moments and plan are what matter

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void finished();
  void applySelected();
  void applySuggestedGemmFormat();
  void showDetails(int row);
  void showMomentStores(const plab::Advice& advice);
  void setSettingsEnabled(bool enabled);
  plab::RunConfig base_;
  plab::Advice advice_;
  AdvisorRunner* runner_;
  QSpinBox* steps_;
  QSpinBox* seeds_;
  QDoubleSpinBox* tolerance_;
  std::vector<std::pair<plab::MomentPrecision, QCheckBox*>> storeChecks_;
  QPushButton* start_;
  QPushButton* stop_;
  QPushButton* apply_;
  QPushButton* applyGemm_;
  QProgressBar* progress_;
  QLabel* status_;
  QLabel* verdict_;
  QLabel* details_;
  FrontierChart* frontier_;
  QTableWidget* candidates_;
  QTableWidget* layers_;
  QTableWidget* momentStores_;
  QPlainTextEdit* log_;
};

}  // namespace plab::ui
