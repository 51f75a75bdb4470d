#include "run/process_run.h"

#include <signal.h>
#include <unistd.h>

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcessEnvironment>
#include <QTemporaryDir>
#include <QThread>
#include <algorithm>

#include "run/stored_run_reader.h"
#include "util/json_file.h"

namespace plab::ui {
namespace {

constexpr int kTailLines = 30;             // of the child's stderr, shown when it fails
constexpr int kShutdownGraceMs = 10000;    // closing the app: SIGINT, then SIGKILL
constexpr qint64 kMaxChunkBytes = 64 << 20;  // metrics read per poll at most

// How the CLI ended, in words.
std::string exitText(int processes, int exitCode, QProcess::ExitStatus status) {
  const std::string who = "precision-lab-cli --nproc " + std::to_string(processes);
  if (status == QProcess::CrashExit) return who + " crashed or was killed";
  return who + " exited with code " + std::to_string(exitCode);
}

}  // namespace

ProcessRun::ProcessRun(QObject* parent) : RunExecutor(parent), cliPath_(defaultCliPath()) {
  registerMetaTypes();
  poll_.setInterval(kPollIntervalMs);
  connect(&poll_, &QTimer::timeout, this, &ProcessRun::poll);
  killTimer_.setSingleShot(true);
  connect(&killTimer_, &QTimer::timeout, this, [this] {
    if (isRunning()) signalGroup(SIGKILL);
  });
}

ProcessRun::~ProcessRun() { shutdown(); }

QString ProcessRun::defaultCliPath() {
  return QDir(QCoreApplication::applicationDirPath()).filePath("precision-lab-cli");
}

bool ProcessRun::isRunning() const { return process_ && process_->state() != QProcess::NotRunning; }

void ProcessRun::start(int runId, const plab::RunConfig& config) {
  runId_ = runId;
  infoSent_ = stopRequested_ = false;
  finished_ = false;
  metricsOffset_ = 0;
  partial_[0].clear();
  partial_[1].clear();
  stderrLines_.clear();
  group_ = 0;
  scratch_ = std::make_unique<QTemporaryDir>(QDir::temp().filePath("precision-lab-XXXXXX"));
  if (!scratch_->isValid()) return failLater("cannot create a temporary folder for the run's config: " +
                                             scratch_->errorString().toStdString());
  const QFileInfo cli(cliPath_);
  if (!cli.isFile() || !cli.isExecutable())
    return failLater("a run on " + std::to_string(processes_) + " processes starts precision-lab-cli, and there is none at " +
                     cliPath_.toStdString() + " (it is built next to precision-lab); set Processes to 1 to train in the app");

  folder_ = config.output_dir.empty() ? scratch_->filePath("run") : QString::fromStdString(config.output_dir);
  const QString configFile = scratch_->filePath("config.json");
  {
    QFile out(configFile);
    const QByteArray text = QByteArray::fromStdString(config.toJson().dump(2));
    if (!out.open(QIODevice::WriteOnly) || out.write(text) != text.size() || !out.flush())
      return failLater("cannot write " + configFile.toStdString() + ": " + out.errorString().toStdString());
  }

  process_ = new QProcess(this);
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  // threads 0 means one LibTorch thread per CPU in every rank: N ranks would
  // ask for N times the CPUs. Each gets its share unless the user said.
  if (config.threads == 0 && !env.contains("OMP_NUM_THREADS"))
    env.insert("OMP_NUM_THREADS", QString::number(std::max(1, QThread::idealThreadCount() / std::max(1, processes_))));
  process_->setProcessEnvironment(env);
  // A group of its own: Stop and Pause reach the launcher and every rank
  // with one kill(), and nothing of the app's own group.
  process_->setChildProcessModifier([] { ::setpgid(0, 0); });
  connect(process_, &QProcess::started, this, &ProcessRun::onStarted);
  connect(process_, &QProcess::finished, this, &ProcessRun::onFinished);
  connect(process_, &QProcess::errorOccurred, this, &ProcessRun::onError);
  connect(process_, &QProcess::readyReadStandardOutput, this,
          [this] { readOutput(QProcess::StandardOutput); });
  connect(process_, &QProcess::readyReadStandardError, this, [this] { readOutput(QProcess::StandardError); });
  const QStringList args = {"run", configFile, "--nproc", QString::number(processes_), "--out", folder_, "--no-pdf"};
  emit logLine(runId_, QString("starting %1 %2").arg(cliPath_, args.join(' ')));
  process_->start(cliPath_, args);
  poll_.start();
}

void ProcessRun::failLater(const std::string& message) {
  plab::RunResult failed;
  failed.status = plab::RunStatus::Failed;
  failed.worldSize = processes_;
  failed.message = message;
  // Queued, as the worker's signals are: the controller is never re-entered from start().
  QMetaObject::invokeMethod(this, [this, failed] { finish(failed); }, Qt::QueuedConnection);
}

void ProcessRun::onStarted() {
  group_ = process_->processId();
  if (stopRequested_) signalGroup(SIGINT);
}

void ProcessRun::signalGroup(int signal) const {
  // Never 0 or 1: kill(0) and kill(-1) would reach the app's own group or every process.
  if (group_ > 1) ::kill(-static_cast<pid_t>(group_), signal);
}

void ProcessRun::stop() {
  // Once: the CLI takes a second SIGINT as "end now" (a third kills).
  if (finished_ || stopRequested_) return;
  stopRequested_ = true;
  // The launcher ignores SIGINT; every rank stops at the same step and rank
  // 0 writes summary.json. Not started yet: onStarted sends it.
  signalGroup(SIGINT);
  killTimer_.start(kStopGraceMs);
}

void ProcessRun::shutdown() {
  if (!isRunning()) return;
  stop();
  if (!process_->waitForFinished(kShutdownGraceMs)) {
    signalGroup(SIGKILL);
    process_->waitForFinished(5000);
  }
}

void ProcessRun::readOutput(QProcess::ProcessChannel channel) {
  if (!process_) return;
  process_->setReadChannel(channel);
  QByteArray& buffer = partial_[channel == QProcess::StandardError ? 1 : 0];
  buffer += process_->readAll();
  qsizetype end;
  while ((end = buffer.indexOf('\n')) >= 0) {
    // The CLI's progress bar redraws with \r on a terminal; not here, but a
    // line may still carry one.
    QString line = QString::fromUtf8(buffer.left(end)).section('\r', -1).trimmed();
    buffer.remove(0, end + 1);
    // c10d's C++ stack traces would fill the tail and the log: their
    // message lines stay.
    if (line.isEmpty() || line.startsWith("frame #") || line.startsWith("Exception raised from")) continue;
    if (channel == QProcess::StandardError) {
      stderrLines_ << line;
      while (stderrLines_.size() > kTailLines) stderrLines_.removeFirst();
    }
    emit logLine(runId_, line);
  }
}

std::string ProcessRun::stderrTail() const {
  QStringList lines = stderrLines_;
  if (!partial_[1].trimmed().isEmpty()) lines << QString::fromUtf8(partial_[1]).trimmed();
  return lines.join('\n').toStdString();
}

void ProcessRun::poll() {
  if (folder_.isEmpty()) return;
  const std::filesystem::path folder = folder_.toStdString();
  if (!infoSent_ && plab::readJsonFile(folder / "run_info.json").ok()) {
    try {
      plab::RunInfo info = readStoredRun(folder).record.info;  // with rank_memory
      infoSent_ = true;
      emit runStarted(runId_, info);
    } catch (const std::exception&) {
      return;  // config.json not readable yet: next time
    }
  }
  if (infoSent_) readNewSteps();
}

void ProcessRun::readNewSteps() {
  QFile file(QDir(folder_).filePath("metrics.jsonl"));
  if (!file.open(QIODevice::ReadOnly) || file.size() <= metricsOffset_ || !file.seek(metricsOffset_)) return;
  const QByteArray chunk = file.read(std::min(file.size() - metricsOffset_, kMaxChunkBytes));
  // Only whole lines: the last one may still be being written.
  const qsizetype end = chunk.lastIndexOf('\n');
  if (end < 0) return;
  metricsOffset_ += end + 1;
  for (const QByteArray& line : chunk.left(end).split('\n')) {
    if (line.trimmed().isEmpty()) continue;
    nlohmann::json value;
    if (static_cast<uint64_t>(line.size()) > plab::kMaxJsonLineBytes ||
        !plab::parseJsonText(std::string_view(line.constData(), static_cast<size_t>(line.size())), value).empty())
      continue;  // rank 0 writes whole lines: nothing here is torn, but never trust a file
    try {
      emit stepMeasured(runId_, plab::stepMetricsFromJson(value));
    } catch (const std::exception& e) {
      emit logLine(runId_, QString("metrics.jsonl: a line is not a step: %1").arg(e.what()));
    }
  }
}

void ProcessRun::onError(QProcess::ProcessError error) {
  if (error != QProcess::FailedToStart || finished_) return;  // the others end in finished()
  poll_.stop();
  plab::RunResult failed;
  failed.status = plab::RunStatus::Failed;
  failed.worldSize = processes_;
  failed.message = "cannot start " + cliPath_.toStdString() + ": " + process_->errorString().toStdString();
  finish(failed);
}

void ProcessRun::onFinished(int exitCode, QProcess::ExitStatus status) {
  poll_.stop();
  killTimer_.stop();
  signalGroup(SIGKILL);  // a rank the launcher left behind (it never should)
  readOutput(QProcess::StandardOutput);
  readOutput(QProcess::StandardError);
  poll();  // the last steps
  plab::RunResult result;
  bool summarized = false;
  try {
    const plab::StoredRun run = readStoredRun(folder_.toStdString());
    result = run.record.result;
    summarized = run.status != plab::StoredRunStatus::Incomplete;
  } catch (const std::exception& e) {
    result.message = e.what();  // not even config.json: the CLI refused the run
  }
  const bool clean = status == QProcess::NormalExit && (exitCode == 0 || (stopRequested_ && exitCode == 130));
  if (!summarized) {
    result.status = stopRequested_ ? plab::RunStatus::Stopped : plab::RunStatus::Failed;
    result.message = stopRequested_ ? "stopped before rank 0 wrote summary.json"
                                    : exitText(processes_, exitCode, status) + " without writing summary.json";
  }
  if (!clean || result.status == plab::RunStatus::Failed) {
    if (result.status == plab::RunStatus::Completed) result.status = plab::RunStatus::Failed;  // the report failed
    const std::string tail = stderrTail();
    if (summarized) result.message += (result.message.empty() ? "" : "; ") + exitText(processes_, exitCode, status);
    if (!tail.empty()) result.message += "\n" + tail;
  }
  if (result.worldSize <= 1) result.worldSize = processes_;
  finish(result);
}

void ProcessRun::finish(plab::RunResult result) {
  if (finished_) return;
  finished_ = true;
  poll_.stop();
  killTimer_.stop();
  if (process_) {
    process_->disconnect(this);
    process_->deleteLater();
    process_ = nullptr;
  }
  group_ = 0;
  emit runFinished(runId_, result);
}

std::vector<qint64> ProcessRun::processIds() const {
  std::vector<qint64> pids;
  if (group_ <= 1) return pids;
  for (const QString& entry : QDir("/proc").entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
    bool numeric = false;
    const qint64 pid = entry.toLongLong(&numeric);
    if (!numeric) continue;
    QFile stat("/proc/" + entry + "/stat");
    if (!stat.open(QIODevice::ReadOnly)) continue;  // ended meanwhile
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and ')'.
    const QByteArray text = stat.readAll();
    const QList<QByteArray> fields = text.mid(text.lastIndexOf(')') + 2).split(' ');
    if (fields.size() > 2 && fields[2].toLongLong() == group_) pids.push_back(pid);
  }
  return pids;
}

}  // namespace plab::ui
