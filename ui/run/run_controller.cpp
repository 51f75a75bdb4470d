#include "run/run_controller.h"

#include <QDateTime>
#include <algorithm>

#include "report/report_charts.h"
#include "util/run_folder.h"

namespace plab::ui {

RunController::RunController(RunStore* store, QObject* parent)
    : QObject(parent), store_(store), worker_(new TrainingWorker), processRun_(new ProcessRun(this)) {
  registerMetaTypes();
  thread_.setObjectName("plab-training");
  worker_->moveToThread(&thread_);
  connectExecutor(worker_, Qt::QueuedConnection);
  // Same thread: queued too, so that a signal never re-enters the controller.
  connectExecutor(processRun_, Qt::QueuedConnection);
  thread_.start();
}

void RunController::connectExecutor(RunExecutor* executor, Qt::ConnectionType type) {
  connect(executor, &RunExecutor::runStarted, this, &RunController::onRunStarted, type);
  connect(executor, &RunExecutor::stepMeasured, this, &RunController::onStep, type);
  connect(executor, &RunExecutor::logLine, this, &RunController::logLine, type);
  connect(executor, &RunExecutor::runFinished, this, &RunController::onFinished, type);
}

RunController::~RunController() { shutdown(); }

int RunController::enqueue(const plab::RunConfig& config, int processes) {
  const int run = store_->addRun(config);
  processes_[run] = std::max(1, processes);
  queue_.push_back(run);
  if (activeRun_ < 0) dispatchNext();
  return run;
}

void RunController::dispatchNext() {
  if (shutDown_ || queue_.empty()) {
    if (activeRun_ < 0) emit idle();
    return;
  }
  activeRun_ = queue_.front();
  queue_.pop_front();
  paused_ = false;
  // Chosen before the state changes: the window asks canPause() on it.
  const int processes = processesOf(activeRun_);
  if (processes > 1) processRun_->setProcesses(processes);
  current_ = processes > 1 ? static_cast<RunExecutor*>(processRun_) : worker_;
  store_->setState(activeRun_, RunState::Running);
  plab::RunConfig config = store_->record(activeRun_).config;
  const int run = activeRun_;
  if (!outputRoot_.isEmpty()) {
    try {
      const auto dir = plab::createUniqueRunFolder(outputRoot_.toStdString(), plab::report::safeFileName(config.name));
      config.output_dir = dir.string();
      store_->setFolder(run, QString::fromStdString(config.output_dir), QDateTime::currentDateTime());
    } catch (const std::exception& e) {
      plab::RunResult failed;
      failed.status = plab::RunStatus::Failed;
      failed.message = std::string("cannot create the run folder: ") + e.what();
      onFinished(run, failed);  // dispatches the next run
      return;
    }
  }
  current_->start(run, config);
}

int RunController::processesOf(int run) const {
  const auto it = processes_.find(run);
  return it == processes_.end() ? 1 : it->second;
}

void RunController::pause() {
  if (!current_ || activeRun_ < 0 || paused_ || !current_->canPause()) return;
  current_->pause();
  paused_ = true;
  store_->setState(activeRun_, RunState::Paused);
}

void RunController::resume() {
  if (!current_ || activeRun_ < 0 || !paused_) return;
  current_->resume();
  paused_ = false;
  store_->setState(activeRun_, RunState::Running);
}

void RunController::stopAll() {
  for (int run : queue_) {
    store_->setState(run, RunState::Stopped);
    processes_.erase(run);
  }
  queue_.clear();
  if (activeRun_ >= 0 && current_) current_->stop();
  paused_ = false;
}

void RunController::shutdown() {
  if (shutDown_) return;
  shutDown_ = true;
  // Like the worker's queued signals once its thread has ended, the child's
  // last signals no longer reach the store.
  processRun_->disconnect(this);
  stopAll();
  processRun_->shutdown();  // waits for the child processes to end
  thread_.quit();  // takes effect once the running Trainer::run returns
  thread_.wait();
  delete worker_;  // its thread has ended: no event loop left to deleteLater it
  worker_ = nullptr;
  current_ = nullptr;
}

void RunController::onRunStarted(int run, const plab::RunInfo& info) {
  store_->setInfo(run, info);
  emit runStarted(run);
}

void RunController::onStep(int run, const plab::StepMetrics& step) { store_->appendStep(run, step); }

void RunController::onFinished(int run, const plab::RunResult& result) {
  store_->setResult(run, result);
  processes_.erase(run);
  if (run == activeRun_) {
    activeRun_ = -1;
    paused_ = false;
    current_ = nullptr;
  }
  emit runFinished(run);
  dispatchNext();
}

}  // namespace plab::ui
