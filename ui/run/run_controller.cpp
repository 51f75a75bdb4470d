#include "run/run_controller.h"

#include <QDateTime>

#include "report/report_charts.h"
#include "util/run_folder.h"

namespace plab::ui {

RunController::RunController(RunStore* store, QObject* parent)
    : QObject(parent), store_(store), worker_(new TrainingWorker) {
  registerMetaTypes();
  thread_.setObjectName("plab-training");
  worker_->moveToThread(&thread_);
  connect(worker_, &TrainingWorker::runStarted, this, &RunController::onRunStarted, Qt::QueuedConnection);
  connect(worker_, &TrainingWorker::stepMeasured, this, &RunController::onStep, Qt::QueuedConnection);
  connect(worker_, &TrainingWorker::logLine, this, &RunController::logLine, Qt::QueuedConnection);
  connect(worker_, &TrainingWorker::runFinished, this, &RunController::onFinished, Qt::QueuedConnection);
  thread_.start();
}

RunController::~RunController() { shutdown(); }

int RunController::enqueue(const plab::RunConfig& config) {
  const int run = store_->addRun(config);
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
  QMetaObject::invokeMethod(worker_, [w = worker_, run, config] { w->runTraining(run, config); },
                            Qt::QueuedConnection);
}

void RunController::pause() {
  if (!worker_ || activeRun_ < 0 || paused_) return;
  worker_->pause();
  paused_ = true;
  store_->setState(activeRun_, RunState::Paused);
}

void RunController::resume() {
  if (!worker_ || activeRun_ < 0 || !paused_) return;
  worker_->resume();
  paused_ = false;
  store_->setState(activeRun_, RunState::Running);
}

void RunController::stopAll() {
  for (int run : queue_) store_->setState(run, RunState::Stopped);
  queue_.clear();
  if (activeRun_ >= 0 && worker_) worker_->stop();
  paused_ = false;
}

void RunController::shutdown() {
  if (shutDown_) return;
  shutDown_ = true;
  stopAll();
  thread_.quit();  // takes effect once the running Trainer::run returns
  thread_.wait();
  delete worker_;  // its thread has ended: no event loop left to deleteLater it
  worker_ = nullptr;
}

void RunController::onRunStarted(int run, const plab::RunInfo& info) {
  store_->setInfo(run, info);
  emit runStarted(run);
}

void RunController::onStep(int run, const plab::StepMetrics& step) { store_->appendStep(run, step); }

void RunController::onFinished(int run, const plab::RunResult& result) {
  store_->setResult(run, result);
  if (run == activeRun_) {
    activeRun_ = -1;
    paused_ = false;
  }
  emit runFinished(run);
  dispatchNext();
}

}  // namespace plab::ui
