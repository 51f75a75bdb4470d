#include "panels/optimizer_panel.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QDoubleValidator>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QThread>
#include <algorithm>
#include <climits>

#include "panels/advanced_panel.h"
#include "precision/decay_effect.h"
#include "train/lr_schedule.h"
#include "train/torch_runtime.h"
#include "util/wheel_guard.h"

namespace plab::ui {
namespace {

QSpinBox* optimizerIntSpin(int min, int max, const char* name) {
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
  advanced_ = new AdvancedPanel;  // before any signal can reach applyTo

  mode_ = new QComboBox;
  mode_->setObjectName("optimizerMode");
  // The bf16 recipes, then the fp16 ones (fp16, fp16-mixed with loss scaling).
  for (auto m : plab::everyOptimizerMode())
    mode_->addItem(QString::fromStdString(plab::optimizerModeLabel(m)), QString::fromStdString(plab::optimizerModeId(m)));
  form->addRow("Optimizer mode", mode_);
  modeSummary_ = new QLabel;
  modeSummary_->setObjectName("modeSummary");
  modeSummary_->setWordWrap(true);
  modeSummary_->setStyleSheet("color: palette(mid);");
  form->addRow("", modeSummary_);

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
  moments_ = new QComboBox;
  moments_->setObjectName("moments");
  for (auto p : plab::allMomentPrecisions())
    moments_->addItem(QString::fromStdString(plab::momentPrecisionId(p)), QString::fromStdString(plab::momentPrecisionId(p)));
  moments_->setToolTip(
      "Precision of AdamW's m and v for bf16 layers (bf16-nearest, bf16-kahan, bf16-sr).\n"
      "fp32: 8 bytes per parameter, exact decay.\n"
      "bf16: 4 bytes; 0.999 x v rounds back to v, so v never decays and steps come out too large.\n"
      "bf16-sr: 4 bytes, stochastically rounded writes; decays like fp32 on average.\n"
      "8bit: torchao's AdamW8bit store and step: 1 byte per moment and an fp32 scale per 256,\n"
      "for fp32 layers too; tensors under 4096 elements keep their own dtype, as torchao.\n"
      "4bit: torchao's AdamW4bit: 4 bits per moment and an fp32 scale per 128, likewise.\n"
      "fp8: torchao's AdamWFp8: an fp8 e4m3 byte per moment and an fp32 scale per 256, likewise.\n"
      "default: the recipe's choice (bf16-sr for Kahan and SR, bf16 for bf16-nearest).");
  form->addRow("Moments (bf16 layers)", moments_);
  decayWarning_ = new QLabel;
  decayWarning_->setObjectName("decayWarning");
  decayWarning_->setWordWrap(true);
  decayWarning_->setStyleSheet("color: #b45309;");
  form->addRow("", decayWarning_);

  steps_ = optimizerIntSpin(1, 10000000, "steps");
  batch_ = optimizerIntSpin(1, 65536, "batchSize");
  gradAccum_ = optimizerIntSpin(1, 4096, "gradAccum");
  seqLen_ = optimizerIntSpin(2, 1 << 20, "seqLen");
  form->addRow("Steps", steps_);
  form->addRow("Batch size", batch_);
  processes_ = optimizerIntSpin(1, maxLocalProcesses(), "processes");
  processes_->setValue(1);
  processes_->setToolTip(
      "<p>Data parallel on N local processes, optimizer state sharded; the charts show rank 0 and the statistics "
      "summed over ranks. Above 1 the run goes through precision-lab-cli run --nproc N; the batch size is the "
      "global batch, split evenly over the processes. Such a run cannot pause.</p>");
  form->addRow("Processes", processes_);
  form->addRow("Grad accumulation", gradAccum_);
  form->addRow("Sequence length", seqLen_);

  schedule_ = new QComboBox;
  schedule_->setObjectName("lrSchedule");
  schedule_->addItem("cosine");
  schedule_->addItem("constant");
  form->addRow("LR schedule", schedule_);
  warmup_ = optimizerIntSpin(0, 10000000, "warmupSteps");
  form->addRow("Warmup steps", warmup_);
  minLrRatio_ = doubleSpin(0.0, 1.0, 3, 0.05, "minLrRatio");
  form->addRow("Cosine floor (× lr)", minLrRatio_);
  gradClip_ = doubleSpin(0.0, 1e6, 3, 0.1, "gradClip");
  gradClip_->setSpecialValueText("off");
  form->addRow("Grad clip (norm)", gradClip_);
  seed_ = optimizerIntSpin(0, INT_MAX, "seed");
  seed_->setToolTip("Seed of the initialisation, batch order and stochastic rounding (seed); the split has its own "
                    "under Advanced");
  form->addRow("Seed", seed_);

  connect(mode_, &QComboBox::currentIndexChanged, this, &OptimizerPanel::settingsChanged);
  connect(moments_, &QComboBox::currentIndexChanged, this, &OptimizerPanel::settingsChanged);
  connect(this, &OptimizerPanel::settingsChanged, this, &OptimizerPanel::refreshExplanations);
  connect(lr_, &QLineEdit::textChanged, this, &OptimizerPanel::refreshExplanations);
  connect(weightDecay_, &QDoubleSpinBox::valueChanged, this, &OptimizerPanel::refreshExplanations);
  // The decay warning covers the whole lr schedule.
  connect(steps_, &QSpinBox::valueChanged, this, &OptimizerPanel::refreshExplanations);
  connect(warmup_, &QSpinBox::valueChanged, this, &OptimizerPanel::refreshExplanations);
  connect(minLrRatio_, &QDoubleSpinBox::valueChanged, this, &OptimizerPanel::refreshExplanations);
  connect(schedule_, &QComboBox::currentTextChanged, this, &OptimizerPanel::refreshExplanations);
  connect(schedule_, &QComboBox::currentTextChanged, this,
          [this](const QString& s) { minLrRatio_->setEnabled(s == "cosine"); });

  // Every field may make the run invalid (or valid again). findChildren also
  // finds the line edits inside spin boxes and the editable device combo.
  for (auto* edit : findChildren<QLineEdit*>())
    connect(edit, &QLineEdit::textChanged, this, &OptimizerPanel::inputChanged);
  for (auto* combo : findChildren<QComboBox*>())
    connect(combo, &QComboBox::currentIndexChanged, this, &OptimizerPanel::inputChanged);

  // The rest of the CLI's fields, collapsed below (added after the loops
  // above: it reports its own edits).
  form->addRow(advanced_);
  connect(advanced_, &AdvancedPanel::inputChanged, this, &OptimizerPanel::inputChanged);
  connect(advanced_, &AdvancedPanel::kernelsChanged, this, &OptimizerPanel::settingsChanged);

  setFrom(plab::RunConfig{});
  refreshExplanations();
  guardWheel(this);  // the wheel scrolls the panel over an unfocused field
}

void OptimizerPanel::refreshExplanations() {
  const plab::OptimizerMode m = mode();
  modeSummary_->setText(QString::fromStdString(plab::optimizerModeSummary(m)));
  mode_->setToolTip(modeSummary_->text());
  moments_->setEnabled(plab::modeHasMomentChoice(m));
  moments_->setItemText(0, QString("default (%1)")
                               .arg(QString::fromStdString(plab::momentPrecisionId(plab::momentPrecisionDefault(m)))));
  // Weight decay over every step of the schedule, not only at the peak lr:
  // a decaying lr crosses the rounding thresholds later.
  plab::RunConfig c;
  applyTo(c);
  const plab::DecayAssessment decay = plab::assessWeightDecay(
      m, c.adamw.weight_decay, c.steps, [&c](int64_t step) { return plab::scheduledLr(c, step); });
  const std::string text =
      plab::describeDecayAssessment(m, decay, plab::torchStepFused(c.adamw.torchStep, /*bf16Weights=*/true));
  decayWarning_->setVisible(!text.empty());
  if (text.empty()) return;
  QString sentence = QString::fromStdString(text);
  sentence[0] = sentence[0].toUpper();
  if (m != plab::OptimizerMode::Fp32AdamW) sentence += ". That is for the bf16 layers; fp32 layers decay as fp32 does";
  decayWarning_->setText(sentence + ".");
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
  o.moments = plab::momentPrecisionFromId(moments_->currentData().toString().toStdString());
  plab::RunConfig c;
  advanced_->applyTo(c);
  o.kernels = c.adamw.kernels;
  o.torchStep = c.adamw.torchStep;
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
  config.seed = static_cast<uint64_t>(seed_->value());
  advanced_->applyTo(config);
}

void OptimizerPanel::setFrom(const plab::RunConfig& config) {
  setMode(config.mode);
  lr_->setText(sci(config.adamw.lr));
  beta1_->setValue(config.adamw.beta1);
  beta2_->setValue(config.adamw.beta2);
  eps_->setText(sci(config.adamw.eps));
  weightDecay_->setValue(config.adamw.weight_decay);
  moments_->setCurrentIndex(moments_->findData(QString::fromStdString(plab::momentPrecisionId(config.adamw.moments))));
  steps_->setValue(static_cast<int>(config.steps));
  batch_->setValue(static_cast<int>(config.batch_size));
  gradAccum_->setValue(static_cast<int>(config.grad_accum));
  seqLen_->setValue(static_cast<int>(config.seq_len));
  schedule_->setCurrentIndex(config.lr_schedule == "constant" ? 1 : 0);
  warmup_->setValue(static_cast<int>(config.warmup_steps));
  minLrRatio_->setValue(config.min_lr_ratio);
  gradClip_->setValue(config.grad_clip > 0 ? config.grad_clip : 0.0);
  seed_->setValue(static_cast<int>(config.seed));
  advanced_->setFrom(config);
}

int OptimizerPanel::processes() const { return processes_->value(); }

void OptimizerPanel::setProcesses(int processes) { processes_->setValue(processes); }

int OptimizerPanel::maxLocalProcesses() {
  static const int most = [] {
    int gpus = 0;  // torch-free: the devices a run could be given
    while (gpus < 64 && plab::deviceProblem("cuda:" + std::to_string(gpus)).empty()) ++gpus;
    return std::clamp(std::max(QThread::idealThreadCount(), gpus), 1, 64);
  }();
  return most;
}

}  // namespace plab::ui
