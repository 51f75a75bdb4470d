#pragma once
// The runs table as a model (Qt's model/view): one row per run, or per group
// with its runs as children when the table is grouped (report/run_groups.h:
// by seed family — the default when a config ran on several seeds — or by
// any config fields). A run row shows its figures, its fp32 twin and its
// verdict; a group row its count and the mean ± 95 % interval of its
// members' figures, over the members the filter shows. Texts are computed
// when a row is first shown and kept until the run changes, so a
// workspace of a thousand runs costs what the rows on screen cost. The
// filter and the sort live in RunFilterProxy.
#include <QAbstractItemModel>
#include <QIcon>
#include <optional>
#include <unordered_map>
#include <vector>

#include "report/run_groups.h"

namespace plab::ui {

class RunStore;

class RunTableModel : public QAbstractItemModel {
  Q_OBJECT
 public:
  enum Column {
    NameColumn = 0, ModeColumn, Fp32TwinColumn, StatusColumn, StartedColumn, StepsColumn, LossColumn, ValLossColumn,
    MemoryColumn, SavedColumn, PeakSavedColumn, UpdateLostColumn, RoundedColumn, TokensColumn, VerdictColumn, ColumnCount
  };
  enum Role { SortRole = Qt::UserRole + 1, RunRole, GroupRole };

  explicit RunTableModel(const RunStore* store, QObject* parent = nullptr);

  // "auto": seed families when some config ran on several seeds, else none.
  void setGroupingText(const QString& text);
  QString groupingText() const { return groupingText_; }
  const plab::report::Grouping& grouping() const { return effective_; }  // what the rows show now

  QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
  QModelIndex parent(const QModelIndex& child) const override;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;
  bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;

  QModelIndex indexOfRun(int run, int column = 0) const;
  int runAt(const QModelIndex& index) const;    // -1 on a group row
  int groupAt(const QModelIndex& index) const;  // -1 on a run row
  const std::vector<plab::report::RunGroup>& groups() const { return groups_; }
  // The group row (index into groups()) a run sits under, or -1.
  int groupOfRun(int run) const;
  QString runText(int run, int column) const;  // as the cell shows it

 signals:
  // The user (un)ticked a run or a group: these runs.
  void visibilityRequested(const std::vector<int>& runs, bool visible);

 public slots:
  void rebuild();            // the list of runs or the grouping changed
  void refreshRun(int run);  // one run's figures changed (and what is measured against it)
  void refreshGroups();      // the filter changed: group figures are over the runs it shows
  void refreshChecks();      // runs were ticked or unticked

 private:
  struct RunTexts {
    QString cell[ColumnCount];
    QVariant sort[ColumnCount];
    QString verdict, twinTip, statusTip;
  };
  struct GroupTexts {
    QString cell[ColumnCount];
    QVariant sort[ColumnCount];
    QString twinTip;
  };
  const RunTexts& runTexts(int run) const;
  const GroupTexts& groupTexts(int group) const;
  void dropStaleCaches() const;
  QVariant runData(int run, int column, int role) const;
  QVariant groupData(int group, int column, int role) const;
  QIcon swatch(int run) const;

  const RunStore* store_;
  QString groupingText_ = "auto";
  plab::report::Grouping effective_;
  std::vector<plab::report::RunGroup> groups_;
  // Top-level rows: a group (>= 0: its index) or a run (-1 - run).
  std::vector<int> top_;
  std::vector<int> groupRow_;     // group -> its top-level row
  std::vector<int> groupOfRun_;   // run -> group (-1: top level)
  std::vector<int> rowInGroup_;   // run -> row under its group, or top-level row
  mutable std::unordered_map<int, RunTexts> runCache_;
  mutable std::unordered_map<int, GroupTexts> groupCache_;
  mutable quint64 cacheGeneration_ = 0;
};

}  // namespace plab::ui
