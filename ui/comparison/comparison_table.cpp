#include "comparison/comparison_table.h"

#include <QHeaderView>
#include <QMenu>
#include <QSet>

#include "charts/run_colors.h"
#include "comparison/run_filter_proxy.h"
#include "report/fp32_twin.h"
#include "run/run_store.h"

namespace plab::ui {
namespace {

// Widths in characters of the usual contents (a live table never resizes to
// contents: that would measure every row on every step).
int columnCharacters(int column) {
  switch (column) {
    case ComparisonTable::NameColumn: return 26;
    case ComparisonTable::ModeColumn: return 14;
    case ComparisonTable::Fp32TwinColumn: return 16;
    case ComparisonTable::StatusColumn: return 11;
    case ComparisonTable::StartedColumn: return 16;
    case ComparisonTable::VerdictColumn: return 52;
    default: return 11;
  }
}

}  // namespace

ComparisonTable::ComparisonTable(const RunStore* store, QWidget* parent)
    : QTreeView(parent), store_(store), model_(new RunTableModel(store, this)), proxy_(new RunFilterProxy(store, model_, this)) {
  setObjectName("comparisonTable");
  setModel(proxy_);
  setUniformRowHeights(true);  // rows are measured once, not per row: a thousand runs scroll as six
  setRootIsDecorated(true);
  setItemsExpandable(true);
  setSortingEnabled(true);
  sortByColumn(-1, Qt::AscendingOrder);  // list order until a header is clicked
  setSelectionBehavior(QAbstractItemView::SelectRows);
  setSelectionMode(QAbstractItemView::SingleSelection);
  setAlternatingRowColors(true);
  setTextElideMode(Qt::ElideRight);
  setWordWrap(false);
  setAllColumnsShowFocus(true);
  QHeaderView* h = header();
  h->setStretchLastSection(false);
  h->setSectionResizeMode(QHeaderView::Interactive);
  const int character = fontMetrics().horizontalAdvance('0');
  for (int c = 0; c < ColumnCount; ++c) setColumnWidth(c, columnCharacters(c) * character + 16);
  // The verdict is what the table is for: right after the run and its mode,
  // cut to a fixed width (the whole sentence is its tooltip).
  h->moveSection(VerdictColumn, ModeColumn + 1);
  setContextMenuPolicy(Qt::CustomContextMenu);
  connect(this, &QWidget::customContextMenuRequested, this, &ComparisonTable::showContextMenu);
  connect(model_, &RunTableModel::visibilityRequested, this, &ComparisonTable::visibilityRequested);
}

void ComparisonTable::refreshRun(int run) { model_->refreshRun(run); }

void ComparisonTable::refreshAll() {
  // A rebuild resets the model: keep what the user opened and picked.
  QSet<QString> expanded;
  for (int row = 0; row < proxy_->rowCount(); ++row) {
    const QModelIndex index = proxy_->index(row, 0);
    const int g = model_->groupAt(proxy_->mapToSource(index));
    if (g >= 0 && isExpanded(index)) expanded.insert(QString::fromStdString(model_->groups()[static_cast<size_t>(g)].key));
  }
  const int selected = selectedRun();
  const QString selectedFolder = selected >= 0 ? store_->folder(selected) : QString();
  model_->rebuild();
  for (int row = 0; row < proxy_->rowCount(); ++row) {
    const QModelIndex index = proxy_->index(row, 0);
    const int g = model_->groupAt(proxy_->mapToSource(index));
    if (g >= 0 && expanded.contains(QString::fromStdString(model_->groups()[static_cast<size_t>(g)].key)))
      setExpanded(index, true);
  }
  if (selected >= 0) {
    int run = selectedFolder.isEmpty() ? -1 : store_->findFolder(selectedFolder);
    if (run < 0 && selected < store_->size() && selectedFolder.isEmpty()) run = selected;
    if (run >= 0) selectRun(run);
  }
}

void ComparisonTable::refilter() {
  proxy_->refilter();
  model_->refreshGroups();
}

void ComparisonTable::setGrouping(const QString& text) {
  model_->setGroupingText(text);
  refreshAll();
}

QColor ComparisonTable::nameColor(int run) const {
  if (run < 0 || run >= store_->size()) return {};
  return toQColor(store_->relations().styles[static_cast<size_t>(run)].color);
}

bool ComparisonTable::isRunShown(int run) const {
  const QModelIndex source = model_->indexOfRun(run);
  return source.isValid() && proxy_->mapFromSource(source).isValid();
}

Qt::CheckState ComparisonTable::checkState(int run) const {
  return static_cast<Qt::CheckState>(cellData(run, NameColumn, Qt::CheckStateRole).toInt());
}

void ComparisonTable::setRunChecked(int run, bool checked) {
  model_->setData(model_->indexOfRun(run, NameColumn), checked ? Qt::Checked : Qt::Unchecked, Qt::CheckStateRole);
}

int ComparisonTable::shownTopLevelRows() const { return proxy_->rowCount(); }

int ComparisonTable::runAtView(const QModelIndex& index) const { return model_->runAt(proxy_->mapToSource(index)); }

int ComparisonTable::selectedRun() const {
  const QModelIndexList rows = selectionModel() ? selectionModel()->selectedRows() : QModelIndexList();
  if (rows.isEmpty()) return -1;
  const int run = runAtView(rows.front());
  return run < store_->size() ? run : -1;
}

void ComparisonTable::selectRun(int run) {
  const QModelIndex index = proxy_->mapFromSource(model_->indexOfRun(run));
  if (!index.isValid()) return;
  if (index.parent().isValid()) expand(index.parent());
  selectionModel()->select(index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  setCurrentIndex(index);
}

void ComparisonTable::showContextMenu(const QPoint& pos) {
  const int run = runAtView(indexAt(pos));
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
  const auto& labels = store_->relations().labels;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].config.mode != plab::OptimizerMode::Fp32AdamW || !plab::report::finishedRun(runs[i])) continue;
    const QString folder = QString::fromStdString(plab::report::runFolderName(runs[i]));
    if (folder.isEmpty()) continue;
    const auto differs = plab::report::fp32TwinKeyDifferences(runs[static_cast<size_t>(run)].config, runs[i].config);
    QString label = QString::fromStdString(labels[i]);
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
  return runs[i].config.mode != plab::OptimizerMode::Fp32AdamW && !store_->relations().twins[i];
}

void ComparisonTable::requestFp32Twin(int run) {
  if (lacksFp32Twin(run)) emit fp32TwinRequested(run);
}

}  // namespace plab::ui
