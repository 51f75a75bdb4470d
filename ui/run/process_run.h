#pragma once
// Trains one run data-parallel on N local processes: starts
// `precision-lab-cli run CONFIG.json --nproc N --out FOLDER --no-pdf` as a
// child process in a process group of its own and follows FOLDER as rank 0
// writes it (run_info.json, then metrics.jsonl a line per step, then
// summary.json), polled every 250 ms on the UI thread without blocking it.
// Emits the same signals as the in-process TrainingWorker, so the charts
// and the table cannot tell the two apart. Stop sends SIGINT to the whole
// group (the CLI's ranks stop together at the next step and rank 0 writes
// summary.json), then SIGKILL if it has not ended within the grace period.
// It cannot pause: the CLI has no pause, and suspended ranks (SIGSTOP) fail
// their next collective once PLAB_DIST_TIMEOUT_S has passed (measured: a
// 12 s suspension with a 5 s timeout failed the run at the next step).
#include <QByteArray>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTimer>
#include <memory>
#include <vector>

#include "run/run_executor.h"

class QTemporaryDir;

namespace plab::ui {

class ProcessRun : public RunExecutor {
  Q_OBJECT
 public:
  static constexpr int kPollIntervalMs = 250;
  static constexpr int kStopGraceMs = 20000;  // SIGINT, then SIGKILL: rank 0 writes its report in between

  explicit ProcessRun(QObject* parent = nullptr);
  ~ProcessRun() override;  // shutdown()

  // precision-lab-cli next to this program's binary.
  static QString defaultCliPath();
  void setCliPath(const QString& path) { cliPath_ = path; }
  QString cliPath() const { return cliPath_; }
  void setProcesses(int n) { processes_ = n; }
  int processes() const { return processes_; }

  // config.output_dir is the run folder (the CLI's --out); empty: a
  // temporary folder, removed with this object or the next run.
  void start(int runId, const plab::RunConfig& config) override;
  void pause() override {}
  void resume() override {}
  void stop() override;
  bool isPaused() const override { return false; }
  bool canPause() const override { return false; }
  bool isRunning() const;
  // Stops the child and waits for it (SIGKILL after a shorter grace): for
  // closing the app. The run's signals still fire.
  void shutdown();

  // The processes of the child's group (the launcher and its ranks), from
  // /proc; empty when none is running.
  std::vector<qint64> processIds() const;
  qint64 processGroup() const { return group_; }  // the launcher's pid; 0 when none runs
  QString folder() const { return folder_; }

 private:
  void onStarted();
  void onFinished(int exitCode, QProcess::ExitStatus status);
  void onError(QProcess::ProcessError error);
  void readOutput(QProcess::ProcessChannel channel);
  void poll();
  void readNewSteps();
  void finish(plab::RunResult result);
  void failLater(const std::string& message);
  void signalGroup(int signal) const;
  std::string stderrTail() const;

  QString cliPath_;
  int processes_ = 2;
  QProcess* process_ = nullptr;  // one per run
  QTimer poll_;
  QTimer killTimer_;
  std::unique_ptr<QTemporaryDir> scratch_;  // CONFIG.json, and the run folder without a workspace
  QString folder_;
  qint64 metricsOffset_ = 0;
  QByteArray partial_[2];  // stdout, stderr: text after the last newline
  QStringList stderrLines_;  // the last kTailLines
  int runId_ = -1;
  qint64 group_ = 0;  // the child's process group (its pid); 0: none
  bool infoSent_ = false;
  bool stopRequested_ = false;
  bool finished_ = true;
};

}  // namespace plab::ui
