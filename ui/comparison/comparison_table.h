#pragma once
// One row per run of the session and the workspace: name (with a checkbox
// that shows or hides the run in the charts), mode, status, start time, the
// headline numbers (live while a run is in progress) and a one-line verdict
// against the fp32 run on the same model, data and seed. The name cell
// carries the run's chart colour.
#include <QTableWidget>

namespace plab::ui {

class RunStore;

class ComparisonTable : public QTableWidget {
  Q_OBJECT
 public:
  enum Column {
    NameColumn = 0, ModeColumn, StatusColumn, StartedColumn, StepsColumn, LossColumn, ValLossColumn,
    MemoryColumn, SavedColumn, PeakSavedColumn, UpdateLostColumn, RoundedColumn, TokensColumn, VerdictColumn, ColumnCount
  };
  explicit ComparisonTable(const RunStore* store, QWidget* parent = nullptr);

  void refreshRun(int run);   // updates (or adds) the row of one run
  void refreshAll();
  QColor nameColor(int run) const;  // the colour the run's row shows

 signals:
  void visibilityToggled(int run, bool visible);  // the user (un)ticked a run

 private:
  void refreshVerdict(int run);
  const RunStore* store_;
  bool updating_ = false;  // itemChanged from refreshing is not the user's
};

}  // namespace plab::ui
