#pragma once
// Reads, in the background, the per-layer records of runs listed with
// scalar steps only (report/run_index.h) when a view needs them — the
// heatmap's run, the layer tree's measurements — and hands them to the
// store (RunStore::setDetail, signal detailLoaded). A run is read once; a
// request for a run already read or being read does nothing.
#include <QObject>
#include <QSet>
#include <QString>

#include "util/background_task.h"

namespace plab::ui {

class RunStore;

class RunDetails : public QObject {
  Q_OBJECT
 public:
  explicit RunDetails(RunStore* store, QObject* parent = nullptr);
  ~RunDetails() override;  // waits for reads in flight

  // True when the run's records are there already; else starts reading them.
  bool request(int run);
  bool busy() const { return tasks_.busy(); }

 signals:
  void failed(const QString& folder, const QString& message);

 private:
  RunStore* store_;
  QSet<QString> pending_;
  BackgroundTasks tasks_{this};
};

}  // namespace plab::ui
