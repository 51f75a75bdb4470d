#include "comparison/run_table_model.h"

#include <QFont>
#include <QPainter>
#include <QPixmap>
#include <algorithm>
#include <limits>
#include <map>

#include "charts/run_colors.h"
#include "report/fp32_comparison.h"
#include "report/fp32_twin.h"
#include "report/gemm_format_verdict.h"
#include "report/run_figures.h"
#include "run/run_store.h"

namespace plab::ui {
namespace {

using plab::report::PairedEstimate;

const char* const kHeaders[RunTableModel::ColumnCount] = {
    "Run", "Mode", "fp32 twin", "Status", "Started", "Steps", "Final\nloss", "Final\nval loss", "Memory",
    "State saved\nvs fp32", "Peak saved vs\nfp32 (measured)", "Update\nlost", "Rounded away\n(step)", "Tokens/s",
    "Verdict"};

const char* headerTip(int column) {
  switch (column) {
    case RunTableModel::NameColumn:
      return "Tick a run or a group to draw it in the charts (and export it); the swatch is how the charts draw it";
    case RunTableModel::Fp32TwinColumn:
      return "The fp32 run this run is measured against: the same config except mode and plan. "
             "Right-click a run without one to run it, or to measure a run against another fp32 run. "
             "A group row: the fp32 runs its runs are measured against, each run against its own "
             "(their seed family when they form one)";
    case RunTableModel::SavedColumn:
      return "Training state (weights, gradients, moments, master copies, Kahan buffers) against all-fp32 "
             "AdamW on the same parameters: predicted by the plan, not the process's memory";
    case RunTableModel::PeakSavedColumn:
      return "1 - the run's measured training peak / the peak of its fp32 twin (activations and "
             "temporaries included)";
    case RunTableModel::UpdateLostColumn:
      return "Mean over windows of the share of the intended AdamW update that never reached the weights "
             "the model computes with (fp32 = 0)";
    case RunTableModel::RoundedColumn:
      return "Mean share of non-zero intended updates that left the weight unchanged in a single step";
    case RunTableModel::VerdictColumn:
      return "Against the fp32 twin; a group row: the mean gap of its runs to their own twins with its 95 % "
             "interval (over a seed family: the paired test)";
    default: return nullptr;
  }
}

bool numericColumn(int column) {
  return column >= RunTableModel::StepsColumn && column <= RunTableModel::TokensColumn;
}

// A number the sort can use from a text like "2.3456", "50.0 %", "0.95 MiB";
// below every number when there is none ("–").
QVariant sortNumber(const QString& text) {
  QString t = text;
  t.remove('%').remove("MiB").remove(QChar(0x2009));
  const int cut = t.indexOf(QChar(0xB1));  // "mean ± half"
  if (cut >= 0) t.truncate(cut);
  const int slash = t.indexOf('/');
  if (slash >= 0) t.truncate(slash);
  bool ok = false;
  const double v = t.trimmed().toDouble(&ok);
  return ok ? QVariant(v) : QVariant(-std::numeric_limits<double>::infinity());
}

QIcon groupSwatch(const plab::RunStyle& style) { return QIcon(groupStyleSample(style)); }

QString estimate(const std::optional<PairedEstimate>& e, int decimals, bool percent = false, bool signedLoss = false) {
  return e ? QString::fromStdString(plab::report::estimateText(*e, decimals, percent, signedLoss)) : QString("–");
}

}  // namespace

RunTableModel::RunTableModel(const RunStore* store, QObject* parent) : QAbstractItemModel(parent), store_(store) {}

void RunTableModel::setGroupingText(const QString& text) {
  const QString t = text.trimmed().isEmpty() ? QString("auto") : text.trimmed();
  if (t == groupingText_) return;
  groupingText_ = t;
  rebuild();
}

void RunTableModel::rebuild() {
  beginResetModel();
  runCache_.clear();
  groupCache_.clear();
  groups_.clear();
  top_.clear();
  groupRow_.clear();
  const int n = store_->size();
  groupOfRun_.assign(static_cast<size_t>(n), -1);
  rowInGroup_.assign(static_cast<size_t>(n), -1);

  std::vector<size_t> listed;  // unreadable runs have no config to group by
  for (int i = 0; i < n; ++i)
    if (store_->state(i) != RunState::Unreadable) listed.push_back(static_cast<size_t>(i));
  const auto& relations = store_->relations();
  const QString lower = groupingText_.toLower();
  if (lower == "auto") {
    // Seed families once some config ran on several seeds (a repeat of one
    // seed is not a family to average).
    effective_ = {};
    for (size_t i : listed) {
      const auto& family = relations.familyOf(i);
      const uint64_t seed = store_->record(static_cast<int>(i)).config.seed;
      if (std::any_of(family.begin(), family.end(),
                      [&](size_t j) { return store_->record(static_cast<int>(j)).config.seed != seed; })) {
        effective_.kind = plab::report::Grouping::Kind::SeedFamily;
        break;
      }
    }
  } else {
    effective_ = plab::report::parseGrouping(groupingText_.toStdString());
  }
  if (effective_.kind != plab::report::Grouping::Kind::None) {
    std::vector<const plab::report::RunFields*> fields(static_cast<size_t>(n), nullptr);
    if (effective_.kind == plab::report::Grouping::Kind::Fields)
      for (size_t i : listed) fields[i] = &store_->fields(static_cast<int>(i));
    for (auto& g : plab::report::groupRuns(store_->records(), fields, relations, listed, effective_)) {
      // A seed family of one is a run, not a group; a field group is a group.
      if (effective_.kind == plab::report::Grouping::Kind::SeedFamily && g.members.size() < 2) continue;
      groups_.push_back(std::move(g));
    }
  }
  groupRow_.assign(groups_.size(), -1);
  for (size_t g = 0; g < groups_.size(); ++g)
    for (size_t k = 0; k < groups_[g].members.size(); ++k) {
      const size_t run = groups_[g].members[k];
      groupOfRun_[run] = static_cast<int>(g);
      rowInGroup_[run] = static_cast<int>(k);
    }
  // Top level in list order: a group where its first run stands.
  for (int i = 0; i < n; ++i) {
    const int g = groupOfRun_[static_cast<size_t>(i)];
    if (g < 0) {
      rowInGroup_[static_cast<size_t>(i)] = static_cast<int>(top_.size());
      top_.push_back(-1 - i);
    } else if (groups_[static_cast<size_t>(g)].members.front() == static_cast<size_t>(i)) {
      groupRow_[static_cast<size_t>(g)] = static_cast<int>(top_.size());
      top_.push_back(g);
    }
  }
  cacheGeneration_ = store_->relationsGeneration();
  endResetModel();
}

void RunTableModel::dropStaleCaches() const {
  if (cacheGeneration_ == store_->relationsGeneration()) return;
  runCache_.clear();
  groupCache_.clear();
  cacheGeneration_ = store_->relationsGeneration();
}

void RunTableModel::refreshRun(int run) {
  if (run < 0 || run >= store_->size() || static_cast<size_t>(run) >= groupOfRun_.size()) return;
  dropStaleCaches();
  std::vector<int> changed{run};
  // A new fp32 step changes the verdicts measured against it.
  if (store_->record(run).config.mode == plab::OptimizerMode::Fp32AdamW) {
    const auto& twins = store_->relations().twins;
    for (size_t i = 0; i < twins.size(); ++i)
      if (twins[i] && *twins[i] == static_cast<size_t>(run) && static_cast<int>(i) != run) changed.push_back(static_cast<int>(i));
  }
  for (int r : changed) {
    runCache_.erase(r);
    if (static_cast<size_t>(r) >= groupOfRun_.size()) continue;
    const QModelIndex left = indexOfRun(r, 0);
    emit dataChanged(left, left.siblingAtColumn(ColumnCount - 1));
    if (const int g = groupOfRun_[static_cast<size_t>(r)]; g >= 0) {
      groupCache_.erase(g);
      const QModelIndex group = createIndex(groupRow_[static_cast<size_t>(g)], 0, quintptr(0));
      emit dataChanged(group, group.siblingAtColumn(ColumnCount - 1));
    }
  }
}

void RunTableModel::refreshGroups() {
  groupCache_.clear();
  for (size_t g = 0; g < groups_.size(); ++g) {
    const QModelIndex group = createIndex(groupRow_[g], 0, quintptr(0));
    emit dataChanged(group, group.siblingAtColumn(ColumnCount - 1));
  }
}

void RunTableModel::refreshChecks() {
  if (top_.empty()) return;
  emit dataChanged(index(0, NameColumn), index(static_cast<int>(top_.size()) - 1, NameColumn), {Qt::CheckStateRole});
  for (size_t g = 0; g < groups_.size(); ++g) {
    const QModelIndex parent = createIndex(groupRow_[g], 0, quintptr(0));
    emit dataChanged(index(0, NameColumn, parent),
                     index(static_cast<int>(groups_[g].members.size()) - 1, NameColumn, parent), {Qt::CheckStateRole});
  }
}

QModelIndex RunTableModel::index(int row, int column, const QModelIndex& parent) const {
  if (column < 0 || column >= ColumnCount || row < 0) return {};
  if (!parent.isValid()) return row < static_cast<int>(top_.size()) ? createIndex(row, column, quintptr(0)) : QModelIndex();
  const int g = groupAt(parent);
  if (g < 0 || parent.column() != 0 || row >= static_cast<int>(groups_[static_cast<size_t>(g)].members.size())) return {};
  return createIndex(row, column, quintptr(g + 1));
}

QModelIndex RunTableModel::parent(const QModelIndex& child) const {
  if (!child.isValid() || child.internalId() == 0) return {};
  const auto g = static_cast<size_t>(child.internalId() - 1);
  return g < groups_.size() ? createIndex(groupRow_[g], 0, quintptr(0)) : QModelIndex();
}

int RunTableModel::rowCount(const QModelIndex& parent) const {
  if (!parent.isValid()) return static_cast<int>(top_.size());
  const int g = groupAt(parent);
  return g >= 0 && parent.column() == 0 ? static_cast<int>(groups_[static_cast<size_t>(g)].members.size()) : 0;
}

int RunTableModel::columnCount(const QModelIndex&) const { return ColumnCount; }

int RunTableModel::runAt(const QModelIndex& index) const {
  if (!index.isValid() || index.model() != this) return -1;
  if (index.internalId() == 0) {
    const int t = index.row() < static_cast<int>(top_.size()) ? top_[static_cast<size_t>(index.row())] : 0;
    return t < 0 ? -1 - t : -1;
  }
  const auto g = static_cast<size_t>(index.internalId() - 1);
  if (g >= groups_.size() || index.row() >= static_cast<int>(groups_[g].members.size())) return -1;
  return static_cast<int>(groups_[g].members[static_cast<size_t>(index.row())]);
}

int RunTableModel::groupAt(const QModelIndex& index) const {
  if (!index.isValid() || index.model() != this || index.internalId() != 0) return -1;
  const int t = index.row() < static_cast<int>(top_.size()) ? top_[static_cast<size_t>(index.row())] : -1;
  return t >= 0 ? t : -1;
}

int RunTableModel::groupOfRun(int run) const {
  return run >= 0 && static_cast<size_t>(run) < groupOfRun_.size() ? groupOfRun_[static_cast<size_t>(run)] : -1;
}

QModelIndex RunTableModel::indexOfRun(int run, int column) const {
  if (run < 0 || static_cast<size_t>(run) >= groupOfRun_.size()) return {};
  const int g = groupOfRun_[static_cast<size_t>(run)];
  return createIndex(rowInGroup_[static_cast<size_t>(run)], column, quintptr(g < 0 ? 0 : g + 1));
}

QString RunTableModel::runText(int run, int column) const {
  if (run < 0 || run >= store_->size() || column < 0 || column >= ColumnCount) return {};
  dropStaleCaches();
  return runTexts(run).cell[column];
}

const RunTableModel::RunTexts& RunTableModel::runTexts(int run) const {
  if (const auto it = runCache_.find(run); it != runCache_.end()) return it->second;
  RunTexts t;
  const auto& runs = store_->records();
  const auto& relations = store_->relations();
  const auto i = static_cast<size_t>(run);
  const plab::RunRecord& record = runs[i];
  const RunState state = store_->state(run);
  const auto text = [](const std::string& s) { return QString::fromStdString(s); };
  t.cell[NameColumn] = text(relations.labels[i]);
  t.cell[ModeColumn] = state == RunState::Unreadable ? QString("–") : text(plab::optimizerModeLabel(record.config.mode));
  const size_t skipped = store_->skippedLines(run);
  t.cell[StatusColumn] = state == RunState::Unreadable ? "unreadable: " + store_->problem(run)
                         : skipped > 0 ? QString("%1 (%2 %3 skipped)").arg(runStateText(state)).arg(skipped).arg(skipped == 1 ? "line" : "lines")
                                       : runStateText(state);
  t.statusTip = text(record.result.message);
  const QDateTime started = store_->started(run);
  t.cell[StartedColumn] = started.isValid() ? started.toString("yyyy-MM-dd HH:mm") : QString("–");
  t.sort[StartedColumn] = started.isValid() ? QVariant(started.toSecsSinceEpoch()) : QVariant(qint64(0));
  // The same texts as the HTML and PDF reports (report/run_figures.h).
  const plab::report::RunFigureTexts f = plab::report::runFigureTexts(runs, relations, i);
  t.cell[StepsColumn] = text(f.steps);
  t.cell[LossColumn] = text(f.finalLoss);
  t.cell[ValLossColumn] = text(f.finalValLoss);
  t.cell[MemoryColumn] = text(f.memory);
  t.cell[SavedColumn] = text(f.stateSaved);
  t.cell[PeakSavedColumn] = text(f.peakSaved);
  t.cell[UpdateLostColumn] = text(f.updateLost);
  t.cell[RoundedColumn] = text(f.roundedAway);
  t.cell[TokensColumn] = text(f.tokensPerSecond);
  if (state == RunState::Unreadable) {
    t.cell[Fp32TwinColumn] = "–";
    t.cell[VerdictColumn] = t.verdict = "unreadable: " + store_->problem(run);
  } else {
    QString verdict = text(plab::report::comparisonVerdict(runs, relations, i));
    // Low-precision GEMMs are judged against the bf16-GEMM run of the same
    // config first: that is what such a run compares.
    if (const std::string gemm = plab::report::gemmFormatVerdictText(runs, relations, i); !gemm.empty())
      verdict = text(gemm) + "; " + verdict;
    t.cell[VerdictColumn] = t.verdict = verdict;
    t.cell[Fp32TwinColumn] = text(plab::report::fp32TwinCell(runs, relations, i));
    const auto ref = relations.twins[i];
    t.twinTip = ref || !record.fp32Reference.empty()
                    ? text(plab::report::fp32TwinText(runs, relations, i)) + "\nRight-click to measure against another fp32 run"
                    : QString("No fp32 run with this run's config except mode and plan: right-click to run it");
  }
  for (int c = 0; c < ColumnCount; ++c)
    if (!t.sort[c].isValid()) t.sort[c] = numericColumn(c) ? sortNumber(t.cell[c]) : QVariant(t.cell[c].toLower());
  return runCache_.emplace(run, std::move(t)).first->second;
}

const RunTableModel::GroupTexts& RunTableModel::groupTexts(int group) const {
  if (const auto it = groupCache_.find(group); it != groupCache_.end()) return it->second;
  const plab::report::RunGroup& g = groups_[static_cast<size_t>(group)];
  std::vector<size_t> shown;
  for (size_t run : g.members)
    if (store_->matchesFilter(static_cast<int>(run))) shown.push_back(run);
  const auto& runs = store_->records();
  const plab::report::GroupFigures f = plab::report::groupFigures(runs, store_->relations(), shown);
  GroupTexts t;
  const QString count = shown.size() == g.members.size() ? QString("%1 runs").arg(g.members.size())
                                                         : QString("%1 of %2 runs").arg(shown.size()).arg(g.members.size());
  t.cell[NameColumn] = QString("%1  (%2)").arg(QString::fromStdString(g.label), count);
  std::map<std::string, int> modes, states;
  for (size_t run : shown) {
    ++modes[plab::optimizerModeLabel(runs[run].config.mode)];
    ++states[runStateText(store_->state(static_cast<int>(run))).toStdString()];
  }
  t.cell[ModeColumn] = modes.size() == 1 ? QString::fromStdString(modes.begin()->first)
                                         : QString("%1 modes").arg(modes.size());
  QStringList stateTexts;
  for (const auto& [state, n] : states) stateTexts << QString("%1 %2").arg(n).arg(QString::fromStdString(state));
  t.cell[StatusColumn] = stateTexts.join(", ");
  t.cell[StepsColumn] = count;
  t.sort[StepsColumn] = static_cast<double>(shown.size());
  t.cell[LossColumn] = estimate(f.finalLoss, 4);
  t.cell[ValLossColumn] = estimate(f.finalValLoss, 4);
  if (f.memoryBytes) {
    PairedEstimate mib = *f.memoryBytes;
    for (double* v : {&mib.mean, &mib.ciLow, &mib.ciHigh}) *v /= 1024.0 * 1024.0;
    t.cell[MemoryColumn] = QString::fromStdString(plab::report::estimateText(mib, 2)) + " MiB";
  } else {
    t.cell[MemoryColumn] = "–";
  }
  t.cell[SavedColumn] = estimate(f.stateSaved, 1, true);
  t.cell[PeakSavedColumn] = estimate(f.peakSaved, 1, true);
  t.cell[UpdateLostColumn] = estimate(f.updateLost, 2, true);
  t.cell[RoundedColumn] = estimate(f.roundedAway, 2, true);
  t.cell[TokensColumn] = estimate(f.tokensPerSecond, 0);
  const plab::report::GroupTwinText twins = plab::report::groupFp32TwinText(runs, store_->relations(), shown);
  t.cell[Fp32TwinColumn] = QString::fromStdString(twins.cell);
  t.twinTip = QString::fromStdString(twins.tip);
  if (f.gapToFp32) {
    const PairedEstimate& e = *f.gapToFp32;
    QString verdict = QString("%1 nats %2 vs the fp32 twins")
                          .arg(QString::fromStdString(plab::report::estimateText(e, 4, false, true)),
                               f.gapIsValidation ? "val loss" : "train loss");
    if (e.pairs >= 2)
      verdict += QString(" (mean ± 95 % interval over %1 runs%2)")
                     .arg(e.pairs)
                     .arg(effective_.kind == plab::report::Grouping::Kind::SeedFamily
                              ? QString(", paired: %1").arg(e.beyondNoise() ? "beyond seed noise" : "within seed noise")
                              : QString());
    t.cell[VerdictColumn] = verdict;
    t.sort[VerdictColumn] = e.mean;
  } else {
    t.cell[VerdictColumn] = shown.empty() ? QString("no run shown by the filter") : QString("no fp32 twin to compare with");
  }
  qint64 earliest = std::numeric_limits<qint64>::max();
  for (size_t run : shown)
    if (store_->started(static_cast<int>(run)).isValid())
      earliest = std::min(earliest, store_->started(static_cast<int>(run)).toSecsSinceEpoch());
  t.cell[StartedColumn] = earliest == std::numeric_limits<qint64>::max()
                              ? QString("–")
                              : QDateTime::fromSecsSinceEpoch(earliest).toString("yyyy-MM-dd HH:mm");
  t.sort[StartedColumn] = earliest;
  for (int c = 0; c < ColumnCount; ++c)
    if (!t.sort[c].isValid()) t.sort[c] = numericColumn(c) ? sortNumber(t.cell[c]) : QVariant(t.cell[c].toLower());
  return groupCache_.emplace(group, std::move(t)).first->second;
}

QIcon RunTableModel::swatch(int run) const {
  const auto& styles = store_->relations().styles;
  return QIcon(runStyleSample(styles[static_cast<size_t>(run)]));
}

QVariant RunTableModel::runData(int run, int column, int role) const {
  if (run < 0 || run >= store_->size()) return {};
  if (role == RunRole) return run;
  if (role == GroupRole) return -1;
  if (column == NameColumn && role == Qt::CheckStateRole) return store_->isVisible(run) ? Qt::Checked : Qt::Unchecked;
  if (column == NameColumn && role == Qt::DecorationRole) return swatch(run);
  if (role != Qt::DisplayRole && role != Qt::ToolTipRole && role != SortRole && role != Qt::ForegroundRole &&
      role != Qt::FontRole && role != Qt::TextAlignmentRole)
    return {};
  if (role == Qt::TextAlignmentRole)
    return numericColumn(column) ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
  if (role == Qt::FontRole && column == NameColumn) {
    QFont bold;
    bold.setBold(true);
    return bold;
  }
  if (role == Qt::FontRole) return {};
  const RunTexts& t = runTexts(run);
  switch (role) {
    case Qt::DisplayRole: return t.cell[column];
    case SortRole: return t.sort[column];
    case Qt::ForegroundRole:
      if (column == NameColumn) return toQColor(store_->relations().styles[static_cast<size_t>(run)].color);
      if (column == StatusColumn && (store_->state(run) == RunState::Failed || store_->state(run) == RunState::Unreadable))
        return QColor(176, 0, 32);
      return {};
    case Qt::ToolTipRole:
      if (column == NameColumn) return store_->folder(run).isEmpty() ? t.cell[column] : store_->folder(run);
      if (column == VerdictColumn) return t.verdict;
      if (column == Fp32TwinColumn) return t.twinTip;
      if (column == StatusColumn) return t.statusTip.isEmpty() ? QVariant() : QVariant(t.statusTip);
      return {};
    default: return {};
  }
}

QVariant RunTableModel::groupData(int group, int column, int role) const {
  const plab::report::RunGroup& g = groups_[static_cast<size_t>(group)];
  if (role == RunRole) return -1;
  if (role == GroupRole) return group;
  if (column == NameColumn && role == Qt::CheckStateRole) {
    size_t shown = 0;
    for (size_t run : g.members) shown += store_->isVisible(static_cast<int>(run)) ? 1 : 0;
    return shown == 0 ? Qt::Unchecked : shown == g.members.size() ? Qt::Checked : Qt::PartiallyChecked;
  }
  if (column == NameColumn && role == Qt::DecorationRole)
    return groupSwatch(store_->relations().styles[g.members.front()]);
  if (role == Qt::TextAlignmentRole)
    return numericColumn(column) ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
  if (role == Qt::FontRole && column == NameColumn) {
    QFont bold;
    bold.setBold(true);
    bold.setItalic(true);
    return bold;
  }
  if (role == Qt::ForegroundRole && column == NameColumn)
    return toQColor(store_->relations().styles[g.members.front()].color);
  if (role != Qt::DisplayRole && role != Qt::ToolTipRole && role != SortRole) return {};
  const GroupTexts& t = groupTexts(group);
  if (role == SortRole) return t.sort[column];
  if (role == Qt::ToolTipRole)
    return column == VerdictColumn || column == NameColumn ? QVariant(t.cell[column])
           : column == Fp32TwinColumn                      ? QVariant(t.twinTip)
                                                           : QVariant();
  return t.cell[column];
}

QVariant RunTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid()) return {};
  dropStaleCaches();
  if (const int g = groupAt(index); g >= 0) return groupData(g, index.column(), role);
  return runData(runAt(index), index.column(), role);
}

QVariant RunTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount) return {};
  if (role == Qt::DisplayRole) return QString(kHeaders[section]);
  if (role == Qt::ToolTipRole) return headerTip(section) ? QVariant(QString(headerTip(section))) : QVariant();
  return {};
}

Qt::ItemFlags RunTableModel::flags(const QModelIndex& index) const {
  if (!index.isValid()) return Qt::NoItemFlags;
  Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
  if (index.column() == NameColumn) f |= Qt::ItemIsUserCheckable;
  return f;
}

bool RunTableModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (role != Qt::CheckStateRole || index.column() != NameColumn) return false;
  const bool visible = static_cast<Qt::CheckState>(value.toInt()) != Qt::Unchecked;
  std::vector<int> runs;
  if (const int g = groupAt(index); g >= 0) {
    for (size_t run : groups_[static_cast<size_t>(g)].members) runs.push_back(static_cast<int>(run));
  } else if (const int run = runAt(index); run >= 0) {
    runs.push_back(run);
  }
  if (runs.empty()) return false;
  emit visibilityRequested(runs, visible);
  return true;
}

}  // namespace plab::ui
