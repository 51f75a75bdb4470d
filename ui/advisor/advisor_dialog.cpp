#include "advisor/advisor_dialog.h"

#include <QCheckBox>
#include <QCloseEvent>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScreen>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "advisor/advisor_runner.h"
#include "advisor/frontier_chart.h"
#include "util/wheel_guard.h"
#include "report/number_text.h"

namespace plab::ui {
namespace {

QString percent(double fraction, int decimals = 1) {
  const double scale = std::pow(10.0, decimals);
  return QString::number(std::round(100 * fraction * scale) / scale + 0.0, 'f', decimals) + " %";  // no "-0.0"
}

QString nats(double v) { return QString::fromStdString(plab::report::lossDeltaText(v)); }  // no "-0"

QTableWidgetItem* cell(const QString& text, const QString& tip = {}) {
  auto* item = new QTableWidgetItem(text);
  item->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
  if (!tip.isEmpty()) item->setToolTip(tip);
  return item;
}

QTableWidget* table(const char* name, const QStringList& headers) {
  auto* t = new QTableWidget(0, static_cast<int>(headers.size()));
  t->setObjectName(name);
  t->setHorizontalHeaderLabels(headers);
  t->verticalHeader()->setVisible(false);
  t->setSelectionBehavior(QAbstractItemView::SelectRows);
  t->setSelectionMode(QAbstractItemView::SingleSelection);
  t->horizontalHeader()->setStretchLastSection(true);
  return t;
}

QString shadowCell(double lost, double se) { return percent(lost) + " ± " + percent(se); }

QString verdictText(const plab::AdvisorCandidate& c, bool chosen) {
  if (chosen) return "chosen: the cheapest within the tolerance";
  return c.rejected.empty() ? QString("not judged") : QString::fromStdString(c.rejected);
}

QString joined(const std::vector<double>& values) {
  QStringList out;
  for (double v : values) out << QString::number(v, 'f', 4);
  return out.join(", ");
}

// The GEMM formats tried on the chosen plan, one phrase each.
QString gemmVerdict(const plab::Advice& advice) {
  if (advice.gemmCandidates.empty()) return {};
  QStringList parts;
  for (const plab::AdvisorCandidate& c : advice.gemmCandidates) {
    const bool within = c.lossVsFp32 && *c.lossVsFp32 <= advice.tolerance && c.rejected.find("failed") == std::string::npos;
    parts << QString("%1 %2 (%3)")
                 .arg(QString::fromStdString(plab::gemmFormatId(c.config.plan.gemm_format)),
                      c.lossVsFp32 ? nats(*c.lossVsFp32) : QString("?"), within ? "within" : "over");
  }
  QString text = "<br><b>GEMM formats</b> on the chosen plan (simulated), loss vs fp32: " + parts.join(", ") + ". ";
  if (advice.gemmChosen >= 0)
    text += "Fewest bits within the tolerance: <b>" +
            QString::fromStdString(plab::gemmFormatId(
                advice.gemmCandidates[static_cast<size_t>(advice.gemmChosen)].config.plan.gemm_format)) +
            "</b>.";
  else
    text += "None within the tolerance: keep bf16 products.";
  return text;
}

// The moment stores' words, as report.html's *Moment stores* table has them
// (core/advisor/advice_report.cpp): a store whose runs were not made shows
// "not run", never a figure.
QString storeVerdictText(const plab::MomentStoreVerdict& v) {
  if (v.inPlan) return "in the plan";
  return v.confirmed ? "left out" : "not run";
}

QString storeGapText(const plab::MomentStoreVerdict& v, size_t seeds) {
  if (!v.confirmed) return "not run";
  if (!v.lossVsFp32) return "–";
  QString text = nats(*v.lossVsFp32) + " (" + nats(v.ciLow) + " to " + nats(v.ciHigh) + ")";
  // On a line of its own: the column stays narrow, the reason gets the width.
  if (seeds >= 2) text += (v.ciLow > 0 || v.ciHigh < 0) ? "\nbeyond seed noise" : "\nwithin seed noise";
  return text;
}

QString storeMomentErrorText(const plab::MomentStoreVerdict& v) {
  if (!v.momentErrorM && !v.momentErrorV) return v.confirmed ? "not measured" : "not run";
  const auto one = [](const std::optional<double>& e) { return e ? percent(*e, 2) : QString("–"); };
  return "m " + one(v.momentErrorM) + ", v " + one(v.momentErrorV);
}

QString storeDescription(plab::MomentPrecision store) {
  switch (store) {
    case plab::MomentPrecision::Dynamic8bit:
      return "torchao's AdamW8bit store: 8-bit dynamic-tree codes, an fp32 scale per 256 elements";
    case plab::MomentPrecision::Dynamic4bit:
      return "torchao's AdamW4bit store: 4-bit codes (m dynamic-tree, v linear), an fp32 scale per 128 elements";
    case plab::MomentPrecision::Fp8:
      return "torchao's AdamWFp8 store: fp8 e4m3 codes, an fp32 scale per 256 elements";
    default: return {};
  }
}

// The moment stores tried, one word each: which entered the plan.
QString momentStoresVerdict(const plab::Advice& advice) {
  if (advice.momentStores.empty()) return {};
  QStringList parts;
  for (const plab::MomentStoreVerdict& v : advice.momentStores)
    parts << QString::fromStdString(plab::momentPrecisionId(v.store)) + " " + storeVerdictText(v);
  return "<br><b>Moment stores</b> (tab <i>Moment stores</i> for why): " + parts.join(", ").toHtmlEscaped() + ".";
}

}  // namespace

AdvisorDialog::AdvisorDialog(const plab::RunConfig& base, QWidget* parent)
    : QDialog(parent), base_(base), runner_(new AdvisorRunner(this)) {
  setObjectName("advisorDialog");
  setWindowTitle("Suggest a plan — precision advisor");
  // As large as it was designed for, but never beyond the screen (a
  // 1280 x 720 laptop).
  const QSize room = screen() ? screen()->availableGeometry().size() - QSize(40, 60) : QSize(1000, 760);
  resize(QSize(1000, 760).boundedTo(room));
  auto* layout = new QVBoxLayout(this);

  // Short, so that the frontier and the candidates keep the height of a
  // 1280 x 720 screen; the whole method in the tooltip.
  auto* intro = new QLabel(
      "Finds the cheapest plan whose validation loss stays within a tolerance of fp32's, by measurement on the "
      "current model, data and hyper-parameters (hover for how).");
  intro->setWordWrap(true);
  intro->setToolTip(
      "<p>One fp32 run measures per layer what a bf16 nearest, stochastic and Kahan write would lose (shadow); "
      "candidate plans are built from those figures, and each is trained against fp32 on the same batches over "
      "the seeds; then the quantized moment stores ticked (8bit, 4bit, fp8) are tried on that plan, confirmed the "
      "same way, and one enters the plan only when its own gap is within the tolerance; then the chosen plan is "
      "tried with every matrix product in fp8 and MX formats (simulated; measured in shadow too).</p>");
  layout->addWidget(intro);

  // The three settings on one line, the controls on the next.
  auto* settings = new QHBoxLayout;
  steps_ = new QSpinBox;
  steps_->setObjectName("advisorSteps");
  steps_->setRange(2, 1000000);
  steps_->setValue(static_cast<int>(std::clamp<int64_t>(base.steps, 2, 1000000)));
  steps_->setToolTip("Steps of every run (the shadow run, fp32 and each candidate per seed)");
  seeds_ = new QSpinBox;
  seeds_->setObjectName("advisorSeeds");
  seeds_->setRange(2, 10);
  seeds_->setValue(3);
  seeds_->setToolTip("Seeds each plan is confirmed on (the run's seed and the next ones); the fp32 runs' "
                     "spread over them sets the automatic tolerance");
  tolerance_ = new QDoubleSpinBox;
  tolerance_->setObjectName("advisorTolerance");
  tolerance_->setDecimals(4);
  tolerance_->setRange(0, 10);
  tolerance_->setSingleStep(0.001);
  tolerance_->setSpecialValueText(QString("auto: 2 × fp32's seed spread, at least %1 nats").arg(plab::kMinTolerance));
  tolerance_->setSuffix(" nats");
  tolerance_->setToolTip("How much higher than fp32's the final validation loss may be (mean over the seeds, paired)");
  const auto labelled = [settings](const QString& text, QWidget* field, int stretch) {
    auto* label = new QLabel(text);
    label->setBuddy(field);
    settings->addWidget(label);
    settings->addWidget(field, stretch);
  };
  labelled("Steps per run", steps_, 1);
  settings->addSpacing(12);
  labelled("Seeds", seeds_, 1);
  settings->addSpacing(12);
  labelled("Tolerance", tolerance_, 3);
  settings->addSpacing(12);
  // The quantized moment stores tried on the plan the candidates give
  // (advisor stage 4; the CLI's --moment-stores): none ticked is `none`.
  auto* storesLabel = new QLabel("Moment stores");
  storesLabel->setToolTip("Quantized moment stores tried run-wide on the plan the candidates give, cheapest first, "
                          "each confirmed against fp32 like a candidate (the CLI's --moment-stores); none ticked: none");
  settings->addWidget(storesLabel);
  for (plab::MomentPrecision store : plab::AdvisorOptions{}.momentStores) {
    auto* box = new QCheckBox(QString::fromStdString(plab::momentPrecisionId(store)));
    box->setObjectName("advisorMomentStore-" + box->text());
    box->setChecked(true);
    box->setToolTip(storeDescription(store));
    settings->addWidget(box);
    storeChecks_.emplace_back(store, box);
  }
  layout->addLayout(settings);

  auto* controls = new QHBoxLayout;
  start_ = new QPushButton("▶ Start");
  start_->setObjectName("advisorStart");
  stop_ = new QPushButton("■ Stop");
  stop_->setObjectName("advisorStop");
  stop_->setEnabled(false);
  progress_ = new QProgressBar;
  progress_->setObjectName("advisorProgress");
  progress_->setRange(0, 1);
  progress_->setValue(0);
  status_ = new QLabel("not started");
  status_->setObjectName("advisorStatus");
  controls->addWidget(start_);
  controls->addWidget(stop_);
  controls->addWidget(progress_, 1);
  layout->addLayout(controls);
  layout->addWidget(status_);

  verdict_ = new QLabel;
  verdict_->setObjectName("advisorVerdict");
  verdict_->setWordWrap(true);
  verdict_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(verdict_);

  frontier_ = new FrontierChart;
  candidates_ = table("advisorCandidates", {"Plan", "State saved", "Loss − fp32 (95 % CI)", "Verdict"});
  // Verdicts are sentences: wrapped in their cell, whole in its tooltip and
  // in the details below.
  candidates_->setWordWrap(true);
  candidates_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  candidates_->horizontalHeader()->setSectionResizeMode(3, QHeaderView::Stretch);
  details_ = new QLabel;
  details_->setObjectName("advisorCandidateDetails");
  details_->setWordWrap(true);
  details_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  details_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  details_->setMargin(4);
  auto* detailsScroll = new QScrollArea;  // a long verdict scrolls rather than squeezing the table
  detailsScroll->setWidget(details_);
  detailsScroll->setWidgetResizable(true);
  detailsScroll->setFrameShape(QFrame::NoFrame);
  detailsScroll->setMinimumHeight(4 * fontMetrics().lineSpacing() + 12);
  auto* candidatesPane = new QSplitter(Qt::Vertical);
  candidatesPane->addWidget(candidates_);
  candidatesPane->addWidget(detailsScroll);
  candidatesPane->setStretchFactor(0, 3);
  candidatesPane->setStretchFactor(1, 1);
  candidatesPane->setChildrenCollapsible(false);
  layers_ = table("advisorLayers", {"Layer", "Elements", "Lost: nearest", "Lost: stochastic", "Lost: Kahan",
                                    "Updates < ½ ulp"});
  layers_->horizontalHeaderItem(2)->setToolTip(
      "Shadow: the share of the intended fp32 update a round-to-nearest bf16 write would lose, mean over the "
      "windows ± standard error (sampled elements)");
  // The moment stores' verdicts, as report.html's *Moment stores* table.
  momentStores_ = table("advisorMomentStores", {"Store", "Verdict", "State saved", "Loss − fp32 (95 % CI)",
                                                "Moment error", "Why"});
  momentStores_->setWordWrap(true);
  momentStores_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  momentStores_->horizontalHeaderItem(2)->setToolTip(
      "Training state (weights, gradients, optimizer state with the codes and their fp32 scales) saved against "
      "fp32 AdamW's: as the store's first run allocated it; for a store not run, the module-tree estimate (run-wide) "
      "or the run-wide store's measured saving scaled by its layers' share of the elements (on part of the model)");
  momentStores_->horizontalHeaderItem(4)->setToolTip(
      "The relative error of the stored m and v against the fp32 moment each step computed "
      "(||stored − exact|| / ||exact||), mean over the windows and seeds");
  log_ = new QPlainTextEdit;
  log_->setObjectName("advisorLog");
  log_->setReadOnly(true);
  log_->setMaximumBlockCount(2000);
  // The candidates, the shadow figures and the log one at a time, each with
  // the height the frontier leaves.
  auto* panes = new QTabWidget;
  panes->setObjectName("advisorPanes");
  panes->addTab(candidatesPane, "Candidates");
  panes->addTab(momentStores_, "Moment stores");
  panes->addTab(layers_, "Shadow per layer");
  panes->addTab(log_, "Log");
  // Headers whole before the first advice too.
  for (QTableWidget* t : {candidates_, layers_, momentStores_})
    for (int col = 0; col + 1 < t->columnCount(); ++col) t->resizeColumnToContents(col);
  auto* splitter = new QSplitter(Qt::Vertical);
  splitter->addWidget(frontier_);
  splitter->addWidget(panes);
  splitter->setStretchFactor(0, 1);
  splitter->setStretchFactor(1, 1);
  splitter->setChildrenCollapsible(false);
  layout->addWidget(splitter, 1);

  auto* box = new QDialogButtonBox;
  apply_ = box->addButton("Apply selected plan", QDialogButtonBox::AcceptRole);
  apply_->setObjectName("advisorApply");
  apply_->setEnabled(false);
  apply_->setToolTip("Set the optimizer mode and the layer plan of the selected candidate (the chosen one at first)");
  applyGemm_ = box->addButton("Apply with suggested GEMM format", QDialogButtonBox::ActionRole);
  applyGemm_->setObjectName("advisorApplyGemm");
  applyGemm_->setEnabled(false);
  applyGemm_->setToolTip("Set the chosen plan with every matrix product in the GEMM format the advisor confirmed "
                         "with the fewest bits per element (simulated)");
  box->addButton(QDialogButtonBox::Close);
  layout->addWidget(box);

  connect(start_, &QPushButton::clicked, this, &AdvisorDialog::start);
  connect(stop_, &QPushButton::clicked, this, [this] {
    runner_->stop();
    status_->setText("stopping after the current step…");
  });
  connect(apply_, &QPushButton::clicked, this, &AdvisorDialog::applySelected);
  connect(applyGemm_, &QPushButton::clicked, this, &AdvisorDialog::applySuggestedGemmFormat);
  connect(box, &QDialogButtonBox::rejected, this, &QDialog::close);
  connect(candidates_, &QTableWidget::itemSelectionChanged, this, [this] {
    const int row = candidates_->currentRow();
    apply_->setEnabled(row >= 0 && row < static_cast<int>(advice_.candidates.size()) && !running());
    showDetails(row);
  });
  connect(runner_, &AdvisorRunner::progress, this, [this](int done, int total, const QString& text) {
    progress_->setRange(0, std::max(1, total));
    progress_->setValue(done);
    status_->setText(text);
  });
  connect(runner_, &AdvisorRunner::logLine, this, [this](const QString& line) { log_->appendPlainText(line); });
  connect(runner_, &AdvisorRunner::finished, this, &AdvisorDialog::finished);
  guardWheel(this);
}

AdvisorDialog::~AdvisorDialog() = default;  // the runner stops and joins its thread

bool AdvisorDialog::running() const { return runner_->running(); }

QCheckBox* AdvisorDialog::momentStoreCheck(plab::MomentPrecision store) const {
  for (const auto& [s, box] : storeChecks_)
    if (s == store) return box;
  return nullptr;
}

void AdvisorDialog::setSettingsEnabled(bool enabled) {
  for (QWidget* w : {static_cast<QWidget*>(steps_), static_cast<QWidget*>(seeds_), static_cast<QWidget*>(tolerance_)})
    w->setEnabled(enabled);
  for (const auto& entry : storeChecks_) entry.second->setEnabled(enabled);
}

void AdvisorDialog::setBase(const plab::RunConfig& base) {
  if (running()) return;
  base_ = base;
}

plab::AdvisorOptions AdvisorDialog::options() const {
  plab::AdvisorOptions o;
  o.base = base_;
  o.base.output_dir.clear();
  o.steps = steps_->value();
  o.seeds.clear();
  for (int i = 0; i < seeds_->value(); ++i) o.seeds.push_back(base_.seed + static_cast<uint64_t>(i));
  if (tolerance_->value() > 0) o.tolerance = tolerance_->value();
  o.momentStores.clear();
  for (const auto& [store, box] : storeChecks_)
    if (box->isChecked()) o.momentStores.push_back(store);
  return o;
}

void AdvisorDialog::start() {
  if (running()) return;
  advice_ = {};
  candidates_->setRowCount(0);
  layers_->setRowCount(0);
  momentStores_->setRowCount(0);
  verdict_->clear();
  details_->clear();
  log_->clear();
  apply_->setEnabled(false);
  applyGemm_->setEnabled(false);
  start_->setEnabled(false);
  stop_->setEnabled(true);
  setSettingsEnabled(false);
  progress_->setRange(0, 0);  // busy until the first report
  status_->setText("starting…");
  runner_->start(options());
}

void AdvisorDialog::finished() {
  start_->setEnabled(true);
  stop_->setEnabled(false);
  setSettingsEnabled(true);
  progress_->setRange(0, 1);
  progress_->setValue(1);
  showAdvice(runner_->advice());
}

void AdvisorDialog::showAdvice(const plab::Advice& advice) {
  advice_ = advice;
  status_->setText(advice.completed ? QString("done in %1 s").arg(advice.seconds, 0, 'f', 0)
                                    : "not completed: " + QString::fromStdString(advice.message));
  candidates_->setRowCount(static_cast<int>(advice.candidates.size()));
  for (int row = 0; row < candidates_->rowCount(); ++row) {
    const plab::AdvisorCandidate& c = advice.candidates[static_cast<size_t>(row)];
    candidates_->setItem(row, 0, cell(QString::fromStdString(c.name), QString::fromStdString(c.description)));
    candidates_->setItem(row, 1, cell(percent(c.memorySaved)));
    candidates_->setItem(row, 2, cell(c.lossVsFp32 ? nats(*c.lossVsFp32) + " (" + nats(c.ciLow) + " to " + nats(c.ciHigh) + ")"
                                                   : QString("not run")));
    const bool chosen = row == advice.chosen;
    QTableWidgetItem* verdict = cell(verdictText(c, chosen), verdictText(c, chosen));
    if (chosen) {
      QFont bold = verdict->font();
      bold.setBold(true);
      for (int col = 0; col < 3; ++col) candidates_->item(row, col)->setFont(bold);
      verdict->setFont(bold);
    }
    candidates_->setItem(row, 3, verdict);
  }
  // The figures whole; the plan name at most 26 characters or 30 % of the
  // table wide (wrapped, whole in the details); the verdict takes the rest
  // of the width, wrapped.
  for (int col = 0; col < 3; ++col) candidates_->resizeColumnToContents(col);
  const int planWidth = std::max(26 * fontMetrics().averageCharWidth(), candidates_->viewport()->width() * 3 / 10);
  candidates_->setColumnWidth(0, std::min(candidates_->columnWidth(0), planWidth));
  showDetails(candidates_->currentRow());
  layers_->setRowCount(static_cast<int>(advice.layers.size()));
  for (int row = 0; row < layers_->rowCount(); ++row) {
    const plab::LayerShadowFigures& l = advice.layers[static_cast<size_t>(row)];
    layers_->setItem(row, 0, cell(QString::fromStdString(l.layer)));
    layers_->setItem(row, 1, cell(QString::number(l.elements)));
    layers_->setItem(row, 2, cell(shadowCell(l.lostNearest, l.lostNearestSe)));
    layers_->setItem(row, 3, cell(shadowCell(l.lostStochastic, l.lostStochasticSe)));
    layers_->setItem(row, 4, cell(shadowCell(l.lostKahan, l.lostKahanSe)));
    layers_->setItem(row, 5, cell(percent(l.belowHalfUlp)));
  }
  layers_->resizeColumnsToContents();
  showMomentStores(advice);
  frontier_->showAdvice(advice);

  QString text = QString("Tolerance %1 nats (%2). fp32 spread over %3 seeds: %4 nats.")
                     .arg(advice.tolerance, 0, 'g', 3)
                     .arg(QString::fromStdString(advice.toleranceSource))
                     .arg(advice.seeds.size())
                     .arg(advice.fp32Spread, 0, 'g', 3);
  if (advice.chosen >= 0 && advice.chosen < static_cast<int>(advice.candidates.size())) {
    const plab::AdvisorCandidate& c = advice.candidates[static_cast<size_t>(advice.chosen)];
    text = QString("<b>Chosen: %1</b> — saves %2 of fp32's training state, %3 nats vs fp32. ")
               .arg(QString::fromStdString(c.name).toHtmlEscaped(), percent(c.memorySaved),
                    c.lossVsFp32 ? nats(*c.lossVsFp32) : QString("?")) +
           text.toHtmlEscaped();
    candidates_->selectRow(advice.chosen);
  } else {
    text = "<b>No candidate stayed within the tolerance</b> (keep fp32, or allow more). " + text.toHtmlEscaped();
  }
  // CPU time of the shadow's own work over the rest of its run's steps (advisor.h).
  if (advice.shadowOverhead)
    text += QString(" Shadow's CPU time on top of its fp32 run's steps: %1%2 (measured inside each step).")
                .arg(*advice.shadowOverhead >= 0 ? "+" : "")
                .arg(percent(*advice.shadowOverhead, 0));
  text += momentStoresVerdict(advice);
  text += gemmVerdict(advice);
  verdict_->setText(text);
  apply_->setEnabled(candidates_->currentRow() >= 0 && !running());
  applyGemm_->setEnabled(advice.gemmChosen >= 0 && !running());
  applyGemm_->setText(advice.gemmChosen >= 0
                          ? "Apply with " +
                                QString::fromStdString(plab::gemmFormatId(
                                    advice.gemmCandidates[static_cast<size_t>(advice.gemmChosen)].config.plan.gemm_format)) +
                                " GEMMs"
                          : "Apply with suggested GEMM format");
}

void AdvisorDialog::showMomentStores(const plab::Advice& advice) {
  momentStores_->setRowCount(static_cast<int>(advice.momentStores.size()));
  for (int row = 0; row < momentStores_->rowCount(); ++row) {
    const plab::MomentStoreVerdict& v = advice.momentStores[static_cast<size_t>(row)];
    const QString store = QString::fromStdString(plab::momentPrecisionId(v.store));
    if (v.layers.empty()) {
      momentStores_->setItem(row, 0, cell(store, storeDescription(v.store)));
    } else {  // a store tried on part of the model (the advisor's partial store)
      QStringList layers;
      for (const std::string& l : v.layers) layers << QString::fromStdString(l);
      momentStores_->setItem(row, 0, cell(QString("%1 (%2 layers)").arg(store).arg(layers.size()),
                                          storeDescription(v.store) + "\nOn: " + layers.join(", ") +
                                              "; the plan's own moments elsewhere"));
    }
    momentStores_->setItem(row, 1, cell(storeVerdictText(v)));
    // A store not run has an estimate only, and says which.
    const bool known = v.stateBytes > 0 && std::isfinite(v.memorySaved);
    QString savedTip;
    if (known) {
      savedTip = QString("%1 bytes of training state (codes and scales included)%2")
                     .arg(v.stateBytes)
                     .arg(v.confirmed        ? QString(", as its first run allocated them")
                          : v.layers.empty() ? QString(": the module-tree estimate")
                                             : QString(": the run-wide store's measured saving scaled by these layers' "
                                                       "share of the elements"));
      if (v.bytesSaved != 0)
        savedTip += QString("; %1 bytes %2 than the plan with its own moments")
                        .arg(std::abs(v.bytesSaved))
                        .arg(v.bytesSaved > 0 ? "fewer" : "more");
    }
    momentStores_->setItem(row, 2, cell(known ? percent(v.memorySaved) + (v.confirmed ? "" : " (estimate)") : "–", savedTip));
    momentStores_->setItem(row, 3, cell(storeGapText(v, advice.seeds.size())));
    momentStores_->setItem(row, 4, cell(storeMomentErrorText(v)));
    const QString why = QString::fromStdString(v.reason);
    momentStores_->setItem(row, 5, cell(why, why));
    if (v.inPlan) {  // the figures bold, the reason (a paragraph) not
      for (int col = 0; col + 1 < momentStores_->columnCount(); ++col) {
        QFont bold = momentStores_->item(row, col)->font();
        bold.setBold(true);
        momentStores_->item(row, col)->setFont(bold);
      }
    }
  }
  for (int col = 0; col + 1 < momentStores_->columnCount(); ++col) momentStores_->resizeColumnToContents(col);
}

void AdvisorDialog::showDetails(int row) {
  if (row < 0 || row >= static_cast<int>(advice_.candidates.size())) {
    details_->clear();
    return;
  }
  const plab::AdvisorCandidate& c = advice_.candidates[static_cast<size_t>(row)];
  const auto esc = [](const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); };
  QString text = "<b>" + esc(c.name) + "</b>" + (c.description.empty() ? QString() : " — " + esc(c.description));
  text += "<br><b>Verdict:</b> " + verdictText(c, row == advice_.chosen).toHtmlEscaped();
  text += "<br><b>State saved:</b> " + percent(c.memorySaved) + " of fp32's";
  if (c.lossVsFp32)
    text += "; <b>val loss − fp32:</b> " + nats(*c.lossVsFp32) + " nats (95 % CI " + nats(c.ciLow) + " to " +
            nats(c.ciHigh) + "); val loss per seed " + joined(c.valLoss) + " vs fp32's " + joined(advice_.fp32ValLoss);
  if (c.predictedUpdateLost) text += "<br><b>Update lost:</b> shadow " + percent(*c.predictedUpdateLost);
  if (c.measuredUpdateLost)
    text += QString(c.predictedUpdateLost ? ", " : "<br><b>Update lost:</b> ") + "measured " +
            percent(*c.measuredUpdateLost) + (c.measuredUpdateLostSe ? " ± " + percent(*c.measuredUpdateLostSe) : QString());
  if (!c.fp32Layers.empty()) {
    QStringList layers;
    for (const std::string& l : c.fp32Layers) layers << esc(l);
    text += "<br><b>Kept in fp32:</b> " + layers.join(", ");
  }
  if (!c.layerRecipes.empty()) {
    QStringList recipes;
    for (const auto& [layer, recipe] : c.layerRecipes) recipes << esc(layer) + " → " + esc(plab::optimizerModeId(recipe));
    text += "<br><b>Own recipes:</b> " + recipes.join(", ");
  }
  details_->setText(text);
}

void AdvisorDialog::applySelected() {
  const int row = candidates_->currentRow();
  if (row < 0 || row >= static_cast<int>(advice_.candidates.size())) return;
  emit planApplied(advice_.candidates[static_cast<size_t>(row)].config);
  status_->setText("applied " + QString::fromStdString(advice_.candidates[static_cast<size_t>(row)].name) +
                   " to the layer plan and the optimizer mode");
}

void AdvisorDialog::applySuggestedGemmFormat() {
  if (advice_.gemmChosen < 0 || advice_.gemmChosen >= static_cast<int>(advice_.gemmCandidates.size())) return;
  const plab::AdvisorCandidate& c = advice_.gemmCandidates[static_cast<size_t>(advice_.gemmChosen)];
  emit planApplied(c.config);
  status_->setText("applied " + QString::fromStdString(c.name) + " to the layer plan and the optimizer mode");
}

void AdvisorDialog::closeEvent(QCloseEvent* event) {
  runner_->stop();  // the destructor joins; the run in progress ends at its next step
  QDialog::closeEvent(event);
}

}  // namespace plab::ui
