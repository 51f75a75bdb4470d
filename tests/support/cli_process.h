#pragma once
// Runs the real precision-lab-cli (path in $PLAB_CLI, set by ctest) as a
// user would, with a bounded wait.
#include <QProcess>
#include <QString>
#include <QStringList>

#include <functional>

namespace plab::test {

struct CliOutcome {
  int exitCode = -1;  // -1: crashed, killed or timed out
  bool crashed = false;
  int signal = 0;     // the signal that ended it, when known
  QString out, err;
  QByteArray describe() const;
};

QString cliPath();

// Runs the CLI with args in workDir (the current folder when empty).
CliOutcome runCli(const QStringList& args, const QString& workDir = {}, int timeoutMs = 180000);

// Starts the CLI, calls whileRunning(process) each time stderr grows (until
// it returns true), then waits for the end.
CliOutcome runCliWith(const QStringList& args, const std::function<bool(QProcess&, const QString& err)>& whileRunning,
                      int timeoutMs = 180000);

}  // namespace plab::test
