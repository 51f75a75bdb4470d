#include "comparison/run_filter_proxy.h"

#include "comparison/run_table_model.h"
#include "run/run_store.h"

namespace plab::ui {

RunFilterProxy::RunFilterProxy(const RunStore* store, RunTableModel* model, QObject* parent)
    : QSortFilterProxyModel(parent), store_(store), model_(model) {
  setSourceModel(model);
  setSortRole(RunTableModel::SortRole);
  // A group row stays while one of its runs shows (its own row never matches).
  setRecursiveFilteringEnabled(true);
  setDynamicSortFilter(false);  // resorting on every live step would move rows under the mouse
}

void RunFilterProxy::refilter() { invalidateRowsFilter(); }

bool RunFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
  const QModelIndex index = model_->index(sourceRow, 0, sourceParent);
  const int run = model_->runAt(index);
  if (run < 0) return false;  // a group: shown through its runs (recursive filtering)
  return store_->matchesFilter(run);
}

bool RunFilterProxy::lessThan(const QModelIndex& left, const QModelIndex& right) const {
  const QVariant a = left.data(RunTableModel::SortRole), b = right.data(RunTableModel::SortRole);
  if (a.typeId() == QMetaType::QString || b.typeId() == QMetaType::QString)
    return a.toString().localeAwareCompare(b.toString()) < 0;
  return a.toDouble() < b.toDouble();
}

}  // namespace plab::ui
