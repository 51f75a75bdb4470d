#pragma once
// Runs queued configurations one after another on a single training thread
// and records everything in a RunStore. Owns the thread; shutdown() (also
// called by the destructor) stops the current run and joins the thread.
#include <QObject>
#include <QThread>
#include <deque>

#include "run/run_store.h"
#include "run/training_worker.h"

namespace plab::ui {

class RunController : public QObject {
  Q_OBJECT
 public:
  explicit RunController(RunStore* store, QObject* parent = nullptr);
  ~RunController() override;

  // Each run gets a new folder <root>/<name>-<UTC time> when it starts and
  // the trainer streams its metrics there. Empty: runs write nothing.
  void setOutputRoot(const QString& root) { outputRoot_ = root; }
  QString outputRoot() const { return outputRoot_; }

  int enqueue(const plab::RunConfig& config);  // returns the store index; starts if idle
  void pause();
  void resume();
  void stopAll();   // current run stops, queued runs are dropped (state Stopped)
  void shutdown();  // stopAll + join the thread; safe to call twice

  bool isBusy() const { return activeRun_ >= 0; }
  bool isPaused() const { return paused_; }
  int activeRun() const { return activeRun_; }
  int queuedCount() const { return static_cast<int>(queue_.size()); }

 signals:
  void runStarted(int run);
  void logLine(int run, QString line);
  void runFinished(int run);
  void idle();      // the queue ran empty

 private:
  void dispatchNext();
  void onRunStarted(int run, const plab::RunInfo& info);
  void onStep(int run, const plab::StepMetrics& step);
  void onFinished(int run, const plab::RunResult& result);

  RunStore* store_;
  QThread thread_;
  TrainingWorker* worker_;  // lives on thread_, deleted by shutdown()
  std::deque<int> queue_;
  int activeRun_ = -1;
  bool paused_ = false;
  bool shutDown_ = false;
  QString outputRoot_;
};

}  // namespace plab::ui
