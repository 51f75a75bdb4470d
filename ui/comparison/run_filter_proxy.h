#pragma once
// The runs table's filter and sort (Qt's proxy model over RunTableModel):
// a run row shows when the store's filter matches it (report/run_query.h);
// a group row when any of its runs shows. Typing in the filter re-tests the
// rows against the parsed query; the model is never rebuilt per key.
#include <QSortFilterProxyModel>

namespace plab::ui {

class RunStore;
class RunTableModel;

class RunFilterProxy : public QSortFilterProxyModel {
  Q_OBJECT
 public:
  RunFilterProxy(const RunStore* store, RunTableModel* model, QObject* parent = nullptr);
  // The store's filter changed: test every row again.
  void refilter();

 protected:
  bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;
  bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;

 private:
  const RunStore* store_;
  RunTableModel* model_;
};

}  // namespace plab::ui
