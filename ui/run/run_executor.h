#pragma once
// What the RunController drives: something that trains one run at a time
// and reports it through these signals, which reach the controller queued
// or on its own thread. Two kinds: TrainingWorker (in this process, on the
// training thread) and ProcessRun (precision-lab-cli --nproc N as a child
// process, followed through its run folder). start() returns at once.
#include <QObject>
#include <QString>

#include "run/metatypes.h"

namespace plab::ui {

class RunExecutor : public QObject {
  Q_OBJECT
 public:
  using QObject::QObject;
  ~RunExecutor() override = default;

  // Callable from the UI thread; the run's signals follow.
  virtual void start(int runId, const plab::RunConfig& config) = 0;
  virtual void pause() = 0;
  virtual void resume() = 0;
  virtual void stop() = 0;  // stops the current run, or the next one if it has not started yet
  virtual bool isPaused() const = 0;
  virtual bool canPause() const { return true; }

 signals:
  void runStarted(int runId, plab::RunInfo info);
  void stepMeasured(int runId, plab::StepMetrics step);
  void logLine(int runId, QString line);
  void runFinished(int runId, plab::RunResult result);
};

}  // namespace plab::ui
