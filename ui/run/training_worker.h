#pragma once
// Lives on the training thread and runs one plab::Trainer at a time. The
// trainer's callbacks fire on that thread; the signals reach the UI queued.
// pause/resume/stop are called from the UI thread: they only touch the
// Trainer's thread-safe controls under a mutex.
#include <QObject>
#include <QString>
#include <memory>
#include <mutex>

#include "run/run_executor.h"
#include "train/trainer.h"

namespace plab::ui {

class TrainingWorker : public RunExecutor {
  Q_OBJECT
 public:
  explicit TrainingWorker(QObject* parent = nullptr);
  ~TrainingWorker() override;

  // Queues runTraining on the worker's thread.
  void start(int runId, const plab::RunConfig& config) override;
  void pause() override;
  void resume() override;
  void stop() override;
  bool isPaused() const override;

 public slots:
  void runTraining(int runId, plab::RunConfig config);  // blocking, on the worker thread

 private:
  mutable std::mutex mutex_;
  plab::Trainer* trainer_ = nullptr;  // owned by runTraining's stack frame
  bool stopPending_ = false;
};

}  // namespace plab::ui
