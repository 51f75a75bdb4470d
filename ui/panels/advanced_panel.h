#pragma once
// The run settings that rarely change, collapsed under "Advanced" at the
// bottom of the "Optimizer && training" tab: evaluation and measurement
// cadence, checkpoints, threads, device, reproducible CPU math, the step
// kernels, the tokenizer choice, the data split seed and fp16-mixed's loss scaler. With the other
// panels, every field `precision-lab-cli run` takes is editable in the app
// (tests/ui/test_workspace.cpp walks RunConfig::toJson() to keep it so).
#include <QWidget>

#include "train/run_config.h"

class QCheckBox;
class QComboBox;
class QLineEdit;
class QSpinBox;
class QToolButton;

namespace plab::ui {

class AdvancedPanel : public QWidget {
  Q_OBJECT
 public:
  explicit AdvancedPanel(QWidget* parent = nullptr);

  // Writes eval_every, eval_batches, layer_stats_every, update_window,
  // checkpoint_every, threads, device, reproducible, adamw.kernels, adamw.torch_step,
  // model.tokenizer, data.seed and fp16-mixed's loss_scale; leaves the rest untouched.
  void applyTo(plab::RunConfig& config) const;
  void setFrom(const plab::RunConfig& config);

  bool isExpanded() const;
  void setExpanded(bool expanded);

 signals:
  void inputChanged();    // any field edited
  // The step kernels or torch step (the memory estimate's temporaries and
  // the weight-decay note depend on them).
  void kernelsChanged();

 private:
  QToolButton* toggle_;
  QWidget* body_;
  QSpinBox* evalEvery_;
  QSpinBox* evalBatches_;
  QSpinBox* layerStatsEvery_;
  QSpinBox* updateWindow_;
  QSpinBox* checkpointEvery_;
  QSpinBox* threads_;
  QComboBox* device_;
  QCheckBox* reproducible_;
  QComboBox* kernels_;
  QComboBox* torchStep_;
  QComboBox* tokenizer_;
  QSpinBox* dataSeed_;
  QLineEdit* lossScaleInit_;
  QSpinBox* lossScaleGrowth_;
};

}  // namespace plab::ui
