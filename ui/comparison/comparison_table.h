#pragma once
// The runs table: one row per run of the session and the workspace, or per
// group (comparison/run_table_model.h), filtered and sorted by
// comparison/run_filter_proxy.h. A row's name carries the swatch the charts
// draw it with — the table is the charts' legend — and a checkbox that
// draws it (a group's checkbox draws all its runs). A run without an fp32
// twin offers to run one (context menu), and any run can be measured
// against another fp32 run.
#include <QTreeView>
#include <utility>
#include <vector>

#include "comparison/run_table_model.h"

namespace plab::ui {

class RunFilterProxy;
class RunStore;

class ComparisonTable : public QTreeView {
  Q_OBJECT
 public:
  enum Column {
    NameColumn = RunTableModel::NameColumn, ModeColumn, Fp32TwinColumn, StatusColumn, StartedColumn, StepsColumn,
    LossColumn, ValLossColumn, MemoryColumn, SavedColumn, PeakSavedColumn, UpdateLostColumn, RoundedColumn,
    TokensColumn, VerdictColumn, ColumnCount
  };
  explicit ComparisonTable(const RunStore* store, QWidget* parent = nullptr);

  RunTableModel* runModel() const { return model_; }
  RunFilterProxy* proxy() const { return proxy_; }

  void refreshRun(int run);  // one run's figures changed
  void refreshAll();         // the list of runs changed: rebuild (keeps expansion, selection and sort)
  void refilter();           // the store's filter changed
  // "auto" (seed families when a config ran on several seeds), "none",
  // "seeds", or fields ("mode", "mode, model", "adamw.lr").
  void setGrouping(const QString& text);

  QColor nameColor(int run) const;    // the colour the run's row and curves show
  bool lacksFp32Twin(int run) const;  // a non-fp32 run with no fp32 twin in the table
  void requestFp32Twin(int run);      // emits fp32TwinRequested when lacksFp32Twin (the context menu's action)
  // The context menu's "Measure against fp32 run" choices for a run: the
  // folder names of the finished fp32 runs (with their labels); empty for an
  // fp32 run or one not yet on disk.
  std::vector<std::pair<QString, QString>> fp32ReferenceChoices(int run) const;

  // What a run's cell shows, whether the filter shows its row, the rows
  // shown at the top level and the selected run (-1 on a group or none).
  QString cellText(int run, int column) const { return model_->runText(run, column); }
  QVariant cellData(int run, int column, int role) const { return model_->indexOfRun(run, column).data(role); }
  Qt::CheckState checkState(int run) const;
  void setRunChecked(int run, bool checked);  // as a click on its checkbox does
  bool isRunShown(int run) const;
  int shownTopLevelRows() const;
  int selectedRun() const;
  void selectRun(int run);

 signals:
  void visibilityRequested(const std::vector<int>& runs, bool visible);  // the user (un)ticked runs or a group
  void fp32TwinRequested(int run);                 // "Run its fp32 twin" on a run that has none
  void fp32ReferenceChosen(int run, const QString& folderName);  // "" = automatic (same config)

 private:
  void showContextMenu(const QPoint& pos);
  int runAtView(const QModelIndex& index) const;
  const RunStore* store_;
  RunTableModel* model_;
  RunFilterProxy* proxy_;
};

}  // namespace plab::ui
