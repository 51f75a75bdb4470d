#include "panels/advanced_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleValidator>
#include <QLocale>
#include <QFormLayout>
#include <QLineEdit>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <climits>

#include "util/wheel_guard.h"

namespace plab::ui {
namespace {

// Rich text, so that Qt wraps a long tooltip instead of one screen-wide line.
QString wrapped(const QString& text) { return "<p>" + text.toHtmlEscaped() + "</p>"; }

QSpinBox* intSpin(int min, int max, const char* name, const QString& tip) {
  auto* s = new QSpinBox;
  s->setRange(min, max);
  s->setObjectName(name);
  s->setAccelerated(true);
  s->setToolTip(wrapped(tip));
  return s;
}

QComboBox* choice(const QStringList& ids, const char* name, const QString& tip) {
  auto* c = new QComboBox;
  c->addItems(ids);
  c->setObjectName(name);
  c->setToolTip(wrapped(tip));
  return c;
}

int clampedInt(int64_t v, int min) { return static_cast<int>(std::clamp<int64_t>(v, min, INT_MAX)); }

}  // namespace

AdvancedPanel::AdvancedPanel(QWidget* parent) : QWidget(parent) {
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  toggle_ = new QToolButton;
  toggle_->setObjectName("advancedToggle");
  toggle_->setText("Advanced");
  toggle_->setCheckable(true);
  toggle_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  toggle_->setArrowType(Qt::RightArrow);
  toggle_->setAutoRaise(true);
  toggle_->setToolTip(wrapped("Evaluation, measurement cadence, checkpoints, threads, device and kernels: every "
                              "other field precision-lab-cli run takes"));
  outer->addWidget(toggle_);
  body_ = new QWidget;
  body_->setObjectName("advancedSection");
  auto* form = new QFormLayout(body_);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  outer->addWidget(body_);

  evalEvery_ = intSpin(0, INT_MAX, "evalEvery",
                       "Validation loss every this many steps, and at the last step (eval_every; 0: only at the end)");
  evalEvery_->setSpecialValueText("end only");
  form->addRow("Eval every", evalEvery_);
  evalBatches_ = intSpin(1, 1 << 20, "evalBatches",
                         "Batches of the validation split averaged into each validation loss (eval_batches): more "
                         "batches, less noise in the comparison");
  form->addRow("Eval batches", evalBatches_);
  layerStatsEvery_ = intSpin(1, INT_MAX, "layerStatsEvery",
                             "Per-layer statistics (rounded away, update lost per layer) every this many steps and "
                             "at step 1 (layer_stats_every); 1 costs 2-7 % of a step");
  form->addRow("Layer stats every", layerStatsEvery_);
  updateWindow_ = intSpin(0, 1000000, "updateWindow",
                          "Update lost is measured over windows of this many steps: the share of the summed intended "
                          "AdamW updates that did not reach the weights the model computes with (update_window; 0: off)");
  updateWindow_->setSpecialValueText("off");
  updateWindow_->setSuffix(" steps");
  form->addRow("Update-lost window", updateWindow_);
  checkpointEvery_ = intSpin(0, INT_MAX, "checkpointEvery",
                             "Save weights, optimizer and sampler state in checkpoint-N/ of the run folder every this "
                             "many steps (checkpoint_every; 0: none)");
  checkpointEvery_->setSpecialValueText("none");
  form->addRow("Checkpoint every", checkpointEvery_);
  threads_ = intSpin(0, 1024, "threads",
                     "LibTorch intra-op threads (threads; 0: OMP_NUM_THREADS when set, else one per CPU)");
  threads_->setSpecialValueText("auto");
  form->addRow("Threads", threads_);
  device_ = choice({"auto", "cpu", "cuda"}, "device",
                   "Where the run trains (device): auto, cpu, cuda or cuda:N; checked before Start");
  device_->setEditable(true);  // "cuda:1" etc.
  form->addRow("Device", device_);
  reproducible_ = new QCheckBox("bit for bit on any x86-64 CPU");
  reproducible_->setObjectName("reproducible");
  reproducible_->setToolTip(wrapped("One thread and portable kernels, so that the fp32 weights are bit-identical on "
                                    "every x86-64 machine (reproducible; needs device cpu and threads auto or 1)"));
  form->addRow("Reproducible", reproducible_);
  kernels_ = choice({"fused", "reference"}, "stepKernels",
                    "How the bf16 write rules and mixed are computed (adamw.kernels): fused runs one pass per element; "
                    "reference runs the tensor-op functions (slower, several full-size fp32 temporaries). fp32 and "
                    "bf16 follow torch's AdamW as Torch step says");
  form->addRow("Step kernels", kernels_);
  torchStep_ = choice({"default", "fused", "for-loop"}, "torchStep",
                      "Which torch AdamW fp32 and bf16 (and fp32 layers in every mode) match bit for bit "
                      "(adamw.torch_step): fused is torch.optim.AdamW(fused=True) on the CPU, one pass per element, "
                      "computed in fp32 (on bf16 weights nearly bf16-nearest); for-loop is torch's default form "
                      "(foreach=False), several tensor passes, every bf16 operation rounded; default is fused for "
                      "fp32 weights and for-loop for bf16 ones");
  form->addRow("Torch step", torchStep_);
  tokenizer_ = choice({"auto", "bytes"}, "tokenizer",
                      "Tokenizer (model.tokenizer): auto uses the model folder's tokenizer; bytes the byte tokenizer "
                      "even when the folder has one (a pretrained folder without tokenizer.json needs bytes)");
  form->addRow("Tokenizer", tokenizer_);
  dataSeed_ = intSpin(0, INT_MAX, "dataSeed",
                      "Seed of the train/validation split (data.seed). Kept apart from the run's seed as in the CLI "
                      "(--seeds changes only seed), so that several seeds are judged on the same validation text");
  form->addRow("Data split seed", dataSeed_);

  lossScaleInit_ = new QLineEdit;
  lossScaleInit_->setObjectName("lossScaleInit");
  auto* scaleValidator = new QDoubleValidator(0.0, 3.4e38, 12, lossScaleInit_);
  scaleValidator->setNotation(QDoubleValidator::ScientificNotation);
  scaleValidator->setLocale(QLocale::c());
  lossScaleInit_->setValidator(scaleValidator);
  lossScaleInit_->setToolTip(wrapped("fp16-mixed only: the loss scale of the first step (loss_scale.init_scale; "
                                     "torch.amp.GradScaler's default 65536 = 2^16). It doubles after every "
                                     "growth interval of clean steps and halves on a step with Inf/NaN gradients, "
                                     "which is skipped"));
  form->addRow("Initial loss scale", lossScaleInit_);
  lossScaleGrowth_ = intSpin(1, INT_MAX, "lossScaleGrowthInterval",
                             "fp16-mixed only: clean steps before the loss scale doubles "
                             "(loss_scale.growth_interval; GradScaler's default 2000)");
  lossScaleGrowth_->setSuffix(" steps");
  form->addRow("Scale growth interval", lossScaleGrowth_);

  connect(toggle_, &QToolButton::toggled, this, &AdvancedPanel::setExpanded);
  for (auto* edit : findChildren<QLineEdit*>()) connect(edit, &QLineEdit::textChanged, this, &AdvancedPanel::inputChanged);
  for (auto* combo : findChildren<QComboBox*>())
    connect(combo, &QComboBox::currentIndexChanged, this, &AdvancedPanel::inputChanged);
  connect(reproducible_, &QCheckBox::toggled, this, &AdvancedPanel::inputChanged);
  connect(kernels_, &QComboBox::currentIndexChanged, this, &AdvancedPanel::kernelsChanged);
  connect(torchStep_, &QComboBox::currentIndexChanged, this, &AdvancedPanel::kernelsChanged);
  setExpanded(false);
  guardWheel(this);
}

bool AdvancedPanel::isExpanded() const { return toggle_->isChecked(); }

void AdvancedPanel::setExpanded(bool expanded) {
  if (toggle_->isChecked() != expanded) toggle_->setChecked(expanded);  // re-enters through toggled
  toggle_->setArrowType(expanded ? Qt::DownArrow : Qt::RightArrow);
  body_->setVisible(expanded);
}

void AdvancedPanel::applyTo(plab::RunConfig& config) const {
  config.eval_every = evalEvery_->value();
  config.eval_batches = evalBatches_->value();
  config.layer_stats_every = layerStatsEvery_->value();
  config.update_window = updateWindow_->value();
  config.checkpoint_every = checkpointEvery_->value();
  config.threads = threads_->value();
  config.device = device_->currentText().trimmed().toStdString();
  config.reproducible = reproducible_->isChecked();
  config.adamw.kernels = plab::stepKernelsFromId(kernels_->currentText().toStdString());
  config.adamw.torchStep = plab::torchStepFromId(torchStep_->currentText().toStdString());
  config.model.tokenizer = tokenizer_->currentText().toStdString();
  config.data.seed = static_cast<uint64_t>(dataSeed_->value());
  config.loss_scale_init = QLocale::c().toDouble(lossScaleInit_->text());  // 0 when unreadable: refused at Start
  config.loss_scale_growth_interval = lossScaleGrowth_->value();
}

void AdvancedPanel::setFrom(const plab::RunConfig& config) {
  evalEvery_->setValue(clampedInt(config.eval_every, 0));
  evalBatches_->setValue(clampedInt(config.eval_batches, 1));
  layerStatsEvery_->setValue(clampedInt(config.layer_stats_every, 1));
  updateWindow_->setValue(clampedInt(config.update_window, 0));
  checkpointEvery_->setValue(clampedInt(config.checkpoint_every, 0));
  threads_->setValue(clampedInt(config.threads, 0));
  const QString device = QString::fromStdString(config.device);
  if (device_->findText(device) < 0) device_->addItem(device);
  device_->setCurrentText(device);
  reproducible_->setChecked(config.reproducible);
  kernels_->setCurrentText(QString::fromStdString(plab::stepKernelsId(config.adamw.kernels)));
  torchStep_->setCurrentText(QString::fromStdString(plab::torchStepId(config.adamw.torchStep)));
  tokenizer_->setCurrentText(QString::fromStdString(config.model.tokenizer));
  dataSeed_->setValue(static_cast<int>(std::min<uint64_t>(config.data.seed, INT_MAX)));
  lossScaleInit_->setText(QString::number(config.loss_scale_init, 'g', 12));
  lossScaleGrowth_->setValue(clampedInt(config.loss_scale_growth_interval, 1));
}

}  // namespace plab::ui
