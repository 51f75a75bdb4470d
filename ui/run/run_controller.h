#pragma once
// Runs queued configurations one after another and records everything in a
// RunStore. A run on one process trains on the controller's training thread
// (TrainingWorker); a run on N > 1 processes runs precision-lab-cli --nproc N
// as a child process (ProcessRun). Both report through the same signals.
// Owns the thread; shutdown() (also called by the destructor) stops the
// current run, ends a child process and joins the thread.
#include <QObject>
#include <QThread>
#include <deque>
#include <map>

#include "run/process_run.h"
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

  // Returns the store index; starts if idle. processes > 1: data parallel
  // on that many local processes through the CLI.
  int enqueue(const plab::RunConfig& config, int processes = 1);
  void pause();
  void resume();
  void stopAll();   // current run stops, queued runs are dropped (state Stopped)
  void shutdown();  // stopAll + join the thread; safe to call twice

  bool isBusy() const { return activeRun_ >= 0; }
  bool isPaused() const { return paused_; }
  // False while a run on several processes trains (ProcessRun cannot pause).
  bool canPause() const { return current_ && current_->canPause(); }
  int activeRun() const { return activeRun_; }
  int queuedCount() const { return static_cast<int>(queue_.size()); }
  // The processes the run was queued with (1 for runs not queued here).
  int processesOf(int run) const;
  ProcessRun* processRun() const { return processRun_; }  // the multi-process path (its CLI path, its pids)

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
  void connectExecutor(RunExecutor* executor, Qt::ConnectionType type);

  RunStore* store_;
  QThread thread_;
  TrainingWorker* worker_;  // lives on thread_, deleted by shutdown()
  ProcessRun* processRun_;  // lives on this thread, a child of this object
  RunExecutor* current_ = nullptr;  // the one running activeRun_
  std::map<int, int> processes_;    // run -> processes, while queued or running
  std::deque<int> queue_;
  int activeRun_ = -1;
  bool paused_ = false;
  bool shutDown_ = false;
  QString outputRoot_;
};

}  // namespace plab::ui
