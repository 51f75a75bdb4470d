#include "comparison/run_filter.h"

#include <QHeaderView>
#include <QStringList>
#include <QTableWidget>
#include <algorithm>
#include <numeric>

#include "precision/optimizer_mode.h"
#include "run/run_store.h"

namespace plab::ui {

bool runMatchesFilter(const QString& filter, const RunFilterFields& run) {
  const QStringList terms = filter.split(QChar(' '), Qt::SkipEmptyParts);
  const auto occurs = [&run](const QString& term) {
    for (const QString* field : {&run.name, &run.mode, &run.status, &run.folder})
      if (field->contains(term, Qt::CaseInsensitive)) return true;
    return false;
  };
  for (const QString& term : terms) {
    const bool exclude = term.size() > 1 && term.startsWith('-');
    if (exclude ? occurs(term.mid(1)) : !occurs(term)) return false;
  }
  return true;
}

void arrangeRunRows(QTableWidget& table, const RunStore& store, bool groupByMode) {
  const int rows = std::min(table.rowCount(), store.size());
  std::vector<int> order(static_cast<size_t>(rows));
  std::iota(order.begin(), order.end(), 0);
  if (groupByMode) {
    const std::vector<plab::OptimizerMode> modes = plab::allOptimizerModes();
    const auto rank = [&](int run) {
      const auto at = std::find(modes.begin(), modes.end(), store.record(run).config.mode);
      return static_cast<int>(at - modes.begin());
    };
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return rank(a) < rank(b); });
  }
  // Visual moves keep each logical row the run of the same index.
  QHeaderView* header = table.verticalHeader();
  for (int position = 0; position < rows; ++position) {
    const int from = header->visualIndex(order[static_cast<size_t>(position)]);
    if (from != position) header->moveSection(from, position);
  }
  for (int run = 0; run < rows; ++run) table.setRowHidden(run, !store.matchesFilter(run));
}

}  // namespace plab::ui
