#pragma once
// One row per run of the session and the workspace: name (with a checkbox
// that shows or hides the run in the charts), mode, status, start time, the
// headline numbers (live while a run is in progress), the fp32 twin each
// run is measured against (report/fp32_twin.h) and a one-line verdict
// against it. The name cell carries the run's chart colour; a run without a
// twin offers to run one (context menu).
#include <QTableWidget>
#include <utility>
#include <vector>

namespace plab::ui {

class RunStore;

class ComparisonTable : public QTableWidget {
  Q_OBJECT
 public:
  enum Column {
    NameColumn = 0, ModeColumn, Fp32TwinColumn, StatusColumn, StartedColumn, StepsColumn, LossColumn, ValLossColumn,
    MemoryColumn, SavedColumn, PeakSavedColumn, UpdateLostColumn, RoundedColumn, TokensColumn, VerdictColumn, ColumnCount
  };
  explicit ComparisonTable(const RunStore* store, QWidget* parent = nullptr);

  void refreshRun(int run);   // updates (or adds) the row of one run
  void refreshAll();
  QColor nameColor(int run) const;  // the colour the run's row shows
  bool lacksFp32Twin(int run) const;  // a non-fp32 run with no fp32 twin in the table
  void requestFp32Twin(int run);      // emits fp32TwinRequested when lacksFp32Twin (the context menu's action)
  // The context menu's "Measure against fp32 run" choices for a run: the
  // folder names of the finished fp32 runs (with their labels); empty for an
  // fp32 run or one not yet on disk.
  std::vector<std::pair<QString, QString>> fp32ReferenceChoices(int run) const;

 signals:
  void visibilityToggled(int run, bool visible);  // the user (un)ticked a run
  void fp32TwinRequested(int run);                 // "Run its fp32 twin" on a run that has none
  void fp32ReferenceChosen(int run, const QString& folderName);  // "" = automatic (same config)

 private:
  void refreshVerdict(int run);
  void showContextMenu(const QPoint& pos);
  const RunStore* store_;
  bool updating_ = false;  // itemChanged from refreshing is not the user's
};

}  // namespace plab::ui
