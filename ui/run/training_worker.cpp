#include "run/training_worker.h"

#include <exception>

#include "util/thread_priority.h"

namespace plab::ui {

TrainingWorker::TrainingWorker(QObject* parent) : RunExecutor(parent) { registerMetaTypes(); }
TrainingWorker::~TrainingWorker() = default;

void TrainingWorker::start(int runId, const plab::RunConfig& config) {
  QMetaObject::invokeMethod(this, [this, runId, config] { runTraining(runId, config); }, Qt::QueuedConnection);
}

void TrainingWorker::pause() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (trainer_) trainer_->pause();
}

void TrainingWorker::resume() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (trainer_) trainer_->resume();
}

void TrainingWorker::stop() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (trainer_) {
    trainer_->resume();  // a paused trainer must wake up to notice the stop
    trainer_->stop();
  } else {
    stopPending_ = true;
  }
}

bool TrainingWorker::isPaused() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return trainer_ && trainer_->paused();
}

void TrainingWorker::runTraining(int runId, plab::RunConfig config) {
  // Before the run's first parallel region: its OpenMP threads inherit this.
  lowerCurrentThreadPriority();
  plab::RunResult result;
  try {
    plab::Trainer trainer(std::move(config));
    {
      std::lock_guard<std::mutex> lock(mutex_);
      trainer_ = &trainer;
      if (stopPending_) {
        trainer.stop();
        stopPending_ = false;
      }
    }
    plab::Trainer::Callbacks callbacks;
    callbacks.onStart = [this, runId](const plab::RunInfo& info) { emit runStarted(runId, info); };
    callbacks.onStep = [this, runId](const plab::StepMetrics& m) { emit stepMeasured(runId, m); };
    callbacks.onLog = [this, runId](const std::string& line) {
      emit logLine(runId, QString::fromStdString(line));
    };
    result = trainer.run(callbacks);
  } catch (const std::exception& e) {  // Trainer::run never throws; its constructor may
    result.status = plab::RunStatus::Failed;
    result.message = e.what();
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    trainer_ = nullptr;
    stopPending_ = false;
  }
  emit runFinished(runId, result);
}

}  // namespace plab::ui
