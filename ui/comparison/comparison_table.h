#pragma once
// One row per run of the session: name, mode, status and the headline
// numbers (live while a run is in progress). The name cell carries the
// run's chart color.
#include <QTableWidget>

namespace plab::ui {

class RunStore;

class ComparisonTable : public QTableWidget {
  Q_OBJECT
 public:
  enum Column {
    NameColumn = 0, ModeColumn, StatusColumn, StepsColumn, LossColumn, ValLossColumn,
    MemoryColumn, SavedColumn, RoundedColumn, TokensColumn, ColumnCount
  };
  explicit ComparisonTable(const RunStore* store, QWidget* parent = nullptr);

  void refreshRun(int run);   // updates (or adds) the row of one run
  void refreshAll();

 private:
  const RunStore* store_;
};

}  // namespace plab::ui
