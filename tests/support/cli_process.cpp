#include "support/cli_process.h"

#include <QElapsedTimer>

namespace plab::test {

QByteArray CliOutcome::describe() const {
  return ("exit " + QString::number(exitCode) + (crashed ? " (crashed)" : "") + "\nstdout: " + out +
          "\nstderr: " + err)
      .toUtf8();
}

QString cliPath() { return qEnvironmentVariable("PLAB_CLI"); }

namespace {

CliOutcome finish(QProcess& p, QString err, int timeoutMs) {
  CliOutcome o;
  if (!p.waitForFinished(timeoutMs)) {
    p.kill();
    p.waitForFinished();
  }
  o.crashed = p.exitStatus() != QProcess::NormalExit;
  o.exitCode = o.crashed ? -1 : p.exitCode();
  o.out = QString::fromUtf8(p.readAllStandardOutput());
  o.err = err + QString::fromUtf8(p.readAllStandardError());
  return o;
}

}  // namespace

CliOutcome runCli(const QStringList& args, const QString& workDir, int timeoutMs) {
  QProcess p;
  if (!workDir.isEmpty()) p.setWorkingDirectory(workDir);
  p.start(cliPath(), args);
  if (!p.waitForStarted(10000)) {
    CliOutcome o;
    o.err = "cannot start " + cliPath();
    return o;
  }
  return finish(p, {}, timeoutMs);
}

CliOutcome runCliWith(const QStringList& args, const std::function<bool(QProcess&, const QString&)>& whileRunning,
                      int timeoutMs) {
  QProcess p;
  p.start(cliPath(), args);
  if (!p.waitForStarted(10000)) {
    CliOutcome o;
    o.err = "cannot start " + cliPath();
    return o;
  }
  QString err;
  QElapsedTimer clock;
  clock.start();
  bool done = false;
  while (!done && p.state() == QProcess::Running && clock.elapsed() < timeoutMs) {
    p.waitForReadyRead(200);
    err += QString::fromUtf8(p.readAllStandardError());
    done = whileRunning(p, err);
  }
  return finish(p, err, timeoutMs);
}

}  // namespace plab::test
