#pragma once
// The comparison's run filter, as W&B's run search: whitespace-separated
// terms, each of which must occur (case-insensitively) in the run's name,
// mode, status or folder name; "-term" excludes runs where it occurs. An
// empty filter matches every run. Grouping orders rows by optimizer mode.
#include <QString>
#include <vector>

class QTableWidget;

namespace plab::ui {

class RunStore;

struct RunFilterFields {
  QString name, mode, status, folder;
};
bool runMatchesFilter(const QString& filter, const RunFilterFields& run);

// The table's rows (one per store run, in store order) shown in display
// order: grouped by mode (in plab::allOptimizerModes order, then by run
// order) or in run order, and rows the store's filter excludes hidden.
void arrangeRunRows(QTableWidget& table, const RunStore& store, bool groupByMode);

}  // namespace plab::ui
