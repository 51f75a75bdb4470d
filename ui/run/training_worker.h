#pragma once
// Lives on the training thread and runs one plab::Trainer at a time. The
// trainer's callbacks fire on that thread; the signals reach the UI queued.
// pause/resume/stop are called from the UI thread: they only touch the
// Trainer's thread-safe controls under a mutex.
#include <QObject>
#include <QString>
#include <memory>
#include <mutex>

#include "run/metatypes.h"
#include "train/trainer.h"

namespace plab::ui {

class TrainingWorker : public QObject {
  Q_OBJECT
 public:
  explicit TrainingWorker(QObject* parent = nullptr);
  ~TrainingWorker() override;

  void pause();
  void resume();
  void stop();     // stops the current run, or the next one if it has not started yet
  bool isPaused() const;

 public slots:
  void runTraining(int runId, plab::RunConfig config);  // blocking, on the worker thread

 signals:
  void runStarted(int runId, plab::RunInfo info);
  void stepMeasured(int runId, plab::StepMetrics step);
  void logLine(int runId, QString line);
  void runFinished(int runId, plab::RunResult result);

 private:
  mutable std::mutex mutex_;
  plab::Trainer* trainer_ = nullptr;  // owned by runTraining's stack frame
  bool stopPending_ = false;
};

}  // namespace plab::ui
