#pragma once
// One row per run of the session: name, mode, status, the headline numbers
// (live while a run is in progress) and a one-line verdict against the fp32
// run on the same model, data and seed. The name cell carries the run's
// chart color.
#include <QTableWidget>

namespace plab::ui {

class RunStore;

class ComparisonTable : public QTableWidget {
  Q_OBJECT
 public:
  enum Column {
    NameColumn = 0, ModeColumn, StatusColumn, StepsColumn, LossColumn, ValLossColumn,
    MemoryColumn, SavedColumn, UpdateLostColumn, RoundedColumn, TokensColumn, VerdictColumn, ColumnCount
  };
  explicit ComparisonTable(const RunStore* store, QWidget* parent = nullptr);

  void refreshRun(int run);   // updates (or adds) the row of one run
  void refreshAll();

 private:
  void refreshVerdict(int run);
  const RunStore* store_;
};

}  // namespace plab::ui
