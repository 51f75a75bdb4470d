#include "comparison/comparison_table.h"

#include <QHeaderView>
#include <QMenu>
#include <QScopedValueRollback>

#include "charts/run_colors.h"
#include "report/fp32_comparison.h"
#include "report/gemm_format_verdict.h"
#include "report/fp32_twin.h"
#include "report/run_figures.h"
#include "run/run_store.h"

namespace plab::ui {
namespace {

QTableWidgetItem* cell(const QString& text, bool number = true) {
  auto* item = new QTableWidgetItem(text);
  item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
  if (number) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

}  // namespace

ComparisonTable::ComparisonTable(const RunStore* store, QWidget* parent)
    : QTableWidget(0, ColumnCount, parent), store_(store) {
  setObjectName("comparisonTable");
  // Two-line headers keep the numeric columns narrow.
  setHorizontalHeaderLabels({"Run", "Mode", "fp32 twin", "Status", "Started", "Steps", "Final\nloss", "Final\nval loss",
                             "Memory", "State saved\nvs fp32", "Peak saved vs\nfp32 (measured)", "Update\nlost",
                             "Rounded away\n(step)", "Tokens/s", "Verdict"});
  horizontalHeaderItem(SavedColumn)
      ->setToolTip("Training state (weights, gradients, moments, master copies, Kahan buffers) against all-fp32 "
                   "AdamW on the same parameters: predicted by the plan, not the process's memory");
  horizontalHeaderItem(Fp32TwinColumn)
      ->setToolTip("The fp32 run this run is measured against: the same config except mode and plan. "
                   "Right-click a run without one to run it, or to measure a run against another fp32 run");
  horizontalHeaderItem(PeakSavedColumn)
      ->setToolTip("1 - the run's measured training peak / the peak of its fp32 twin (activations and "
                   "temporaries included)");
  horizontalHeaderItem(UpdateLostColumn)
      ->setToolTip("Mean over windows of the share of the intended AdamW update that never reached the weights "
                   "the model computes with (fp32 = 0)");
  horizontalHeaderItem(RoundedColumn)
      ->setToolTip("Mean share of non-zero intended updates that left the weight unchanged in a single step");
  horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  // The verdict is what the table is for: right after the run and its mode,
  // cut to a fixed width (the whole sentence is its tooltip), so that it is
  // on screen without scrolling in a 1600-pixel window.
  horizontalHeader()->moveSection(VerdictColumn, ModeColumn + 1);
  horizontalHeader()->setSectionResizeMode(VerdictColumn, QHeaderView::Interactive);
  setColumnWidth(VerdictColumn, 360);
  setTextElideMode(Qt::ElideRight);
  setWordWrap(false);
  horizontalHeader()->setStretchLastSection(false);
  verticalHeader()->setVisible(false);
  setSelectionBehavior(QAbstractItemView::SelectRows);
  setSelectionMode(QAbstractItemView::SingleSelection);
  setAlternatingRowColors(true);
  horizontalHeaderItem(NameColumn)->setToolTip("Untick a run to hide it from the charts and the export");
  setContextMenuPolicy(Qt::CustomContextMenu);
  connect(this, &QWidget::customContextMenuRequested, this, &ComparisonTable::showContextMenu);
  connect(this, &QTableWidget::itemChanged, this, [this](QTableWidgetItem* item) {
    if (updating_ || item->column() != NameColumn) return;
    emit visibilityToggled(item->row(), item->checkState() == Qt::Checked);
  });
}

QColor ComparisonTable::nameColor(int run) const {
  // The charts colour the visible runs in order; a hidden run shows its
  // mode's own colour.
  const std::vector<int> visible = store_->visibleRuns();
  const std::vector<QColor> colors = runColors(store_->visibleRecords());
  for (size_t i = 0; i < visible.size(); ++i)
    if (visible[i] == run) return colors[i];
  return toQColor(plab::modeColor(store_->record(run).config.mode));
}

void ComparisonTable::refreshAll() {
  setRowCount(store_->size());
  for (int i = 0; i < store_->size(); ++i) refreshRun(i);
}

void ComparisonTable::refreshRun(int run) {
  if (run < 0 || run >= store_->size()) return;
  const QScopedValueRollback<bool> updating(updating_, true);
  if (rowCount() <= run) setRowCount(run + 1);
  const auto& record = store_->record(run);
  const RunState state = store_->state(run);

  // Runs named alike read "name (2)", as the twin column and the legend name them.
  auto* name = cell(QString::fromStdString(plab::report::runLabel(store_->records(), static_cast<size_t>(run))), false);
  name->setFlags(name->flags() | Qt::ItemIsUserCheckable);
  name->setCheckState(store_->isVisible(run) ? Qt::Checked : Qt::Unchecked);
  name->setForeground(nameColor(run));
  if (!store_->folder(run).isEmpty()) name->setToolTip(store_->folder(run));
  QFont bold = name->font();
  bold.setBold(true);
  name->setFont(bold);
  setItem(run, NameColumn, name);
  setItem(run, ModeColumn, cell(state == RunState::Unreadable ? QString("–")  // its config was not read
                                                               : QString::fromStdString(plab::optimizerModeLabel(record.config.mode)),
                                false));
  const size_t skipped = store_->skippedLines(run);
  auto* status = cell(state == RunState::Unreadable ? "unreadable: " + store_->problem(run)
                      : skipped > 0 ? QString("%1 (%2 %3 skipped)").arg(runStateText(state)).arg(skipped).arg(skipped == 1 ? "line" : "lines")
                                    : runStateText(state),
                      false);
  if (state == RunState::Failed || state == RunState::Unreadable) {
    status->setForeground(QColor(176, 0, 32));
    status->setToolTip(QString::fromStdString(record.result.message));
  } else if (!record.result.message.empty()) {
    status->setToolTip(QString::fromStdString(record.result.message));
  }
  setItem(run, StatusColumn, status);
  const QDateTime started = store_->started(run);
  setItem(run, StartedColumn, cell(started.isValid() ? started.toString("yyyy-MM-dd HH:mm") : QString("–"), false));
  // The same texts as the HTML and PDF reports (report/run_figures.h).
  const plab::report::RunFigureTexts f = plab::report::runFigureTexts(store_->records(), static_cast<size_t>(run));
  const auto text = [](const std::string& t) { return QString::fromStdString(t); };
  setItem(run, StepsColumn, cell(text(f.steps)));
  setItem(run, LossColumn, cell(text(f.finalLoss)));
  setItem(run, ValLossColumn, cell(text(f.finalValLoss)));
  setItem(run, MemoryColumn, cell(text(f.memory)));
  setItem(run, SavedColumn, cell(text(f.stateSaved)));
  setItem(run, UpdateLostColumn, cell(text(f.updateLost)));
  setItem(run, RoundedColumn, cell(text(f.roundedAway)));
  setItem(run, TokensColumn, cell(text(f.tokensPerSecond)));
  // A new fp32 step can change the verdicts judged against it (the runs
  // whose twin it is, itself among them); any other run's step changes only
  // its own. Only those rows: a verdict with a paired test reads every run.
  if (record.config.mode == plab::OptimizerMode::Fp32AdamW) {
    const auto twins = plab::report::fp32TwinIndices(store_->records());
    for (int i = 0; i < store_->size() && i < rowCount(); ++i)
      if (twins[static_cast<size_t>(i)] == static_cast<size_t>(run)) refreshVerdict(i);
  } else {
    refreshVerdict(run);
  }
}

void ComparisonTable::refreshVerdict(int run) {
  const QScopedValueRollback<bool> updating(updating_, true);
  const auto& runs = store_->records();
  const auto i = static_cast<size_t>(run);
  const auto ref = plab::report::fp32TwinIndex(runs, i);
  QString verdict = QString::fromStdString(plab::report::comparisonVerdict(runs, i));
  // Low-precision GEMMs are judged against the bf16-GEMM run of the same
  // config first: that is what such a run compares.
  if (const std::string gemm = plab::report::gemmFormatVerdictText(runs, i); !gemm.empty())
    verdict = QString::fromStdString(gemm) + "; " + verdict;
  auto* twin = cell(QString::fromStdString(plab::report::fp32TwinCell(runs, i)), false);
  twin->setToolTip(ref || !runs[i].fp32Reference.empty()
                       ? QString::fromStdString(plab::report::fp32TwinText(runs, i)) +
                             "\nRight-click to measure against another fp32 run"
                       : "No fp32 run with this run's config except mode and plan: right-click to run it");
  setItem(run, Fp32TwinColumn, twin);
  auto* item = cell(verdict, false);
  item->setToolTip(verdict);
  setItem(run, VerdictColumn, item);
  // Against the same fp32 run as the verdict.
  setItem(run, PeakSavedColumn,
          cell(QString::fromStdString(plab::report::peakSavingText(runs[i], ref ? &runs[*ref] : nullptr))));
}

void ComparisonTable::showContextMenu(const QPoint& pos) {
  const int run = rowAt(pos.y());
  if (run < 0 || run >= store_->size()) return;
  QMenu menu(this);
  QAction* twin = menu.addAction("Run its fp32 twin");
  twin->setObjectName("runFp32Twin");
  twin->setEnabled(lacksFp32Twin(run));
  // The reference chosen by hand (report/fp32_twin.h): any finished fp32 run.
  QMenu* against = menu.addMenu("Measure against fp32 run");
  against->setObjectName("measureAgainstMenu");
  const auto choices = fp32ReferenceChoices(run);
  against->setEnabled(!choices.empty());
  const QString current = QString::fromStdString(store_->record(run).fp32Reference);
  QAction* automatic = against->addAction("Automatic (same config)");
  automatic->setCheckable(true);
  automatic->setChecked(current.isEmpty());
  automatic->setData(QString());
  against->addSeparator();
  for (const auto& [folder, label] : choices) {
    QAction* a = against->addAction(label);
    a->setCheckable(true);
    a->setChecked(folder == current);
    a->setData(folder);
  }
  QAction* chosen = menu.exec(viewport()->mapToGlobal(pos));
  if (chosen == twin) requestFp32Twin(run);
  else if (chosen && chosen->parent() == against) emit fp32ReferenceChosen(run, chosen->data().toString());
}

std::vector<std::pair<QString, QString>> ComparisonTable::fp32ReferenceChoices(int run) const {
  std::vector<std::pair<QString, QString>> out;
  if (run < 0 || run >= store_->size()) return out;
  const auto& runs = store_->records();
  if (runs[static_cast<size_t>(run)].config.mode == plab::OptimizerMode::Fp32AdamW || store_->folder(run).isEmpty())
    return out;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].config.mode != plab::OptimizerMode::Fp32AdamW || !plab::report::finishedRun(runs[i])) continue;
    const QString folder = QString::fromStdString(plab::report::runFolderName(runs[i]));
    if (folder.isEmpty()) continue;
    const auto differs = plab::report::fp32TwinKeyDifferences(runs[static_cast<size_t>(run)].config, runs[i].config);
    QString label = QString::fromStdString(plab::report::runLabel(runs, i));
    if (!differs.empty()) label += QString(" (differs in %1)").arg(differs.size() == 1 ? QString::fromStdString(differs[0])
                                                                                       : QString("%1 fields").arg(differs.size()));
    out.emplace_back(folder, label);
  }
  return out;
}

bool ComparisonTable::lacksFp32Twin(int run) const {
  if (run < 0 || run >= store_->size()) return false;
  const auto& runs = store_->records();
  const auto i = static_cast<size_t>(run);
  return runs[i].config.mode != plab::OptimizerMode::Fp32AdamW && !plab::report::fp32TwinIndex(runs, i);
}

void ComparisonTable::requestFp32Twin(int run) {
  if (lacksFp32Twin(run)) emit fp32TwinRequested(run);
}

}  // namespace plab::ui
