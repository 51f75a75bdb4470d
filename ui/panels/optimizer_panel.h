#pragma once
// Optimizer mode, AdamW hyper-parameters and the training loop settings.
// applyTo()/setFrom() map the widgets to RunConfig fields and back.
#include <QWidget>

#include "train/run_config.h"

class QLabel;
class QComboBox;
class QDoubleSpinBox;
class QLineEdit;
class QSpinBox;

namespace plab::ui {

class AdvancedPanel;

class OptimizerPanel : public QWidget {
  Q_OBJECT
 public:
  explicit OptimizerPanel(QWidget* parent = nullptr);

  // Writes mode, adamw, steps, batch, accumulation, seq len, schedule,
  // warmup, clip, seed and the Advanced section's fields (AdvancedPanel);
  // leaves the rest untouched.
  void applyTo(plab::RunConfig& config) const;
  void setFrom(const plab::RunConfig& config);

  plab::OptimizerMode mode() const;
  void setMode(plab::OptimizerMode mode);
  plab::AdamWOptions adamw() const;

  QComboBox* modeCombo() const { return mode_; }
  QSpinBox* stepsSpin() const { return steps_; }
  // Not a RunConfig field: precision-lab-cli run --nproc. 1 trains in the
  // app; N > 1 runs the CLI on N local processes (ProcessRun).
  QSpinBox* processesSpin() const { return processes_; }
  int processes() const;
  void setProcesses(int processes);
  // The field's maximum: CPU cores or GPUs, whichever is more, in 1..64.
  static int maxLocalProcesses();
  AdvancedPanel* advancedPanel() const { return advanced_; }

 private:
  void refreshExplanations();  // mode summary, moment choice, weight-decay warning over the lr schedule

 signals:
  void settingsChanged();  // mode or AdamW options (memory estimate depends on them)
  void inputChanged();     // any field edited: the run may have become (in)valid

 private:
  QComboBox* mode_;
  QLineEdit* lr_;
  QDoubleSpinBox* beta1_;
  QDoubleSpinBox* beta2_;
  QLineEdit* eps_;
  QDoubleSpinBox* weightDecay_;
  QComboBox* moments_;
  QLabel* modeSummary_;
  QLabel* decayWarning_;
  QSpinBox* steps_;
  QSpinBox* batch_;
  QSpinBox* processes_;
  QSpinBox* gradAccum_;
  QSpinBox* seqLen_;
  QComboBox* schedule_;
  QSpinBox* warmup_;
  QDoubleSpinBox* minLrRatio_;
  QDoubleSpinBox* gradClip_;
  QSpinBox* seed_;
  AdvancedPanel* advanced_;
};

}  // namespace plab::ui
