#include "panels/optimizer_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QDoubleValidator>
#include <QFormLayout>
#include <QLineEdit>
#include <QSpinBox>
#include <algorithm>
#include <climits>

namespace plab::ui {
namespace {

QSpinBox* intSpin(int min, int max, const char* name) {
  auto* s = new QSpinBox;
  s->setRange(min, max);
  s->setObjectName(name);
  s->setAccelerated(true);
  return s;
}

QDoubleSpinBox* doubleSpin(double min, double max, int decimals, double step, const char* name) {
  auto* s = new QDoubleSpinBox;
  s->setRange(min, max);
  s->setDecimals(decimals);
  s->setSingleStep(step);
  s->setObjectName(name);
  return s;
}

// lr and eps span many decades: a text field with scientific notation.
QLineEdit* scientificEdit(const char* name) {
  auto* e = new QLineEdit;
  auto* v = new QDoubleValidator(0.0, 1e3, 12, e);
  v->setNotation(QDoubleValidator::ScientificNotation);
  v->setLocale(QLocale::c());
  e->setValidator(v);
  e->setObjectName(name);
  return e;
}

QString sci(double v) { return QString::number(v, 'g', 12); }

}  // namespace

OptimizerPanel::OptimizerPanel(QWidget* parent) : QWidget(parent) {
  auto* form = new QFormLayout(this);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);

  mode_ = new QComboBox;
  mode_->setObjectName("optimizerMode");
  for (auto m : plab::allOptimizerModes())
    mode_->addItem(QString::fromStdString(plab::optimizerModeLabel(m)), QString::fromStdString(plab::optimizerModeId(m)));
  form->addRow("Optimizer mode", mode_);

  lr_ = scientificEdit("learningRate");
  form->addRow("Learning rate", lr_);
  beta1_ = doubleSpin(0.0, 0.999999, 6, 0.01, "beta1");
  beta2_ = doubleSpin(0.0, 0.999999, 6, 0.001, "beta2");
  form->addRow("β1", beta1_);
  form->addRow("β2", beta2_);
  eps_ = scientificEdit("epsilon");
  form->addRow("ε", eps_);
  weightDecay_ = doubleSpin(0.0, 10.0, 5, 0.01, "weightDecay");
  form->addRow("Weight decay", weightDecay_);
  bf16Moments_ = new QCheckBox("AdamW moments of bf16 layers in bf16");
  bf16Moments_->setObjectName("bf16Moments");
  form->addRow("", bf16Moments_);

  steps_ = intSpin(1, 10000000, "steps");
  batch_ = intSpin(1, 65536, "batchSize");
  gradAccum_ = intSpin(1, 4096, "gradAccum");
  seqLen_ = intSpin(2, 1 << 20, "seqLen");
  form->addRow("Steps", steps_);
  form->addRow("Batch size", batch_);
  form->addRow("Grad accumulation", gradAccum_);
  form->addRow("Sequence length", seqLen_);

  schedule_ = new QComboBox;
  schedule_->setObjectName("lrSchedule");
  schedule_->addItem("cosine");
  schedule_->addItem("constant");
  form->addRow("LR schedule", schedule_);
  warmup_ = intSpin(0, 10000000, "warmupSteps");
  form->addRow("Warmup steps", warmup_);
  minLrRatio_ = doubleSpin(0.0, 1.0, 3, 0.05, "minLrRatio");
  form->addRow("Cosine floor (× lr)", minLrRatio_);
  gradClip_ = doubleSpin(0.0, 1e6, 3, 0.1, "gradClip");
  gradClip_->setSpecialValueText("off");
  form->addRow("Grad clip (norm)", gradClip_);
  evalEvery_ = intSpin(0, 10000000, "evalEvery");
  evalEvery_->setSpecialValueText("end only");
  form->addRow("Eval every", evalEvery_);
  layerStatsEvery_ = intSpin(1, 10000000, "layerStatsEvery");
  form->addRow("Layer stats every", layerStatsEvery_);
  seed_ = intSpin(0, INT_MAX, "seed");
  form->addRow("Seed", seed_);
  device_ = new QComboBox;
  device_->setObjectName("device");
  device_->setEditable(true);  // "cuda:1" etc.
  device_->addItems({"auto", "cpu", "cuda"});
  form->addRow("Device", device_);

  connect(mode_, &QComboBox::currentIndexChanged, this, &OptimizerPanel::settingsChanged);
  connect(bf16Moments_, &QCheckBox::toggled, this, &OptimizerPanel::settingsChanged);
  connect(schedule_, &QComboBox::currentTextChanged, this,
          [this](const QString& s) { minLrRatio_->setEnabled(s == "cosine"); });

  setFrom(plab::RunConfig{});
}

plab::OptimizerMode OptimizerPanel::mode() const {
  return plab::optimizerModeFromId(mode_->currentData().toString().toStdString());
}

void OptimizerPanel::setMode(plab::OptimizerMode mode) {
  const int index = mode_->findData(QString::fromStdString(plab::optimizerModeId(mode)));
  if (index >= 0) mode_->setCurrentIndex(index);
}

plab::AdamWOptions OptimizerPanel::adamw() const {
  plab::AdamWOptions o;
  o.lr = QLocale::c().toDouble(lr_->text());
  o.beta1 = beta1_->value();
  o.beta2 = beta2_->value();
  o.eps = QLocale::c().toDouble(eps_->text());
  o.weight_decay = weightDecay_->value();
  o.bf16_moments = bf16Moments_->isChecked();
  return o;
}

void OptimizerPanel::applyTo(plab::RunConfig& config) const {
  config.mode = mode();
  config.adamw = adamw();
  config.steps = steps_->value();
  config.batch_size = batch_->value();
  config.grad_accum = gradAccum_->value();
  config.seq_len = seqLen_->value();
  config.lr_schedule = schedule_->currentText().toStdString();
  config.warmup_steps = warmup_->value();
  config.min_lr_ratio = minLrRatio_->value();
  config.grad_clip = gradClip_->value();
  config.eval_every = evalEvery_->value();
  config.layer_stats_every = layerStatsEvery_->value();
  config.seed = static_cast<uint64_t>(seed_->value());
  config.device = device_->currentText().trimmed().toStdString();
}

void OptimizerPanel::setFrom(const plab::RunConfig& config) {
  setMode(config.mode);
  lr_->setText(sci(config.adamw.lr));
  beta1_->setValue(config.adamw.beta1);
  beta2_->setValue(config.adamw.beta2);
  eps_->setText(sci(config.adamw.eps));
  weightDecay_->setValue(config.adamw.weight_decay);
  bf16Moments_->setChecked(config.adamw.bf16_moments);
  steps_->setValue(static_cast<int>(config.steps));
  batch_->setValue(static_cast<int>(config.batch_size));
  gradAccum_->setValue(static_cast<int>(config.grad_accum));
  seqLen_->setValue(static_cast<int>(config.seq_len));
  schedule_->setCurrentIndex(config.lr_schedule == "constant" ? 1 : 0);
  warmup_->setValue(static_cast<int>(config.warmup_steps));
  minLrRatio_->setValue(config.min_lr_ratio);
  gradClip_->setValue(config.grad_clip > 0 ? config.grad_clip : 0.0);
  evalEvery_->setValue(static_cast<int>(config.eval_every));
  layerStatsEvery_->setValue(static_cast<int>(std::max<int64_t>(1, config.layer_stats_every)));
  seed_->setValue(static_cast<int>(config.seed));
  const QString device = QString::fromStdString(config.device);
  if (device_->findText(device) < 0) device_->addItem(device);
  device_->setCurrentText(device);
}

}  // namespace plab::ui
