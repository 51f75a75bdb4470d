// Run folders are never overwritten without a word: a non-empty --out is
// refused unless --overwrite, a folder being written is locked, and default
// folder names are unique per run.
#include <QtTest/QtTest>

#include <fstream>
#include <set>

#include "support/cli_process.h"
#include "train/metrics_writer.h"
#include "util/errors.h"
#include "util/run_folder.h"
#include "util/workspace_folder.h"

using namespace plab;
using plab::test::CliOutcome;
using plab::test::runCli;
namespace fs = std::filesystem;

namespace {
QString str(const fs::path& p) { return QString::fromStdString(p.string()); }
}  // namespace

class TestRunFolder : public QObject {
  Q_OBJECT
 private slots:
  void nonEmptyFolderIsRefusedUnlessOverwrite() {
    QTemporaryDir tmp;
    const fs::path dir = fs::path(tmp.path().toStdString()) / "run";
    { RunFolderLock first(dir, false); }
    std::ofstream(dir / "metrics.jsonl") << "{\"step\": 1}\n";
    std::ofstream(dir / "notes.txt") << "mine";
    std::ofstream(dir / ".tokens-123-0.tmp") << "left by a crash before the token file was unlinked";
    try {
      RunFolderLock second(dir, false);
      QFAIL("expected ConfigError");
    } catch (const ConfigError& e) {
      QVERIFY2(std::string(e.what()).find("--overwrite") != std::string::npos, e.what());
    }
    { RunFolderLock replaced(dir, true); }
    QVERIFY(!fs::exists(dir / "metrics.jsonl"));  // what a run wrote goes
    QVERIFY(!fs::exists(dir / ".tokens-123-0.tmp"));
    QVERIFY(fs::exists(dir / "notes.txt"));       // what it did not write stays
  }

  void lockedFolderIsRefused() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    RunFolderLock held(dir, false);
    try {
      RunFolderLock other(dir, true);
      QFAIL("expected ConfigError");
    } catch (const ConfigError& e) {
      QVERIFY2(std::string(e.what()).find("in use") != std::string::npos, e.what());
    }
  }

  void uniqueFolderNames() {
    QTemporaryDir tmp;
    const fs::path parent = tmp.path().toStdString();
    std::set<fs::path> made;
    for (int i = 0; i < 5; ++i) made.insert(createUniqueRunFolder(parent, "same"));
    QCOMPARE(made.size(), size_t(5));
  }

  // Two runs into one --out both exited 0, the second silently replacing the
  // first one's results.
  void cliRefusesASecondRunIntoTheSameFolder() {
    if (plab::test::cliPath().isEmpty()) QSKIP("PLAB_CLI not set (run through ctest)");
    QTemporaryDir tmp;
    const fs::path out = fs::path(tmp.path().toStdString()) / "run";
    const QStringList args = {"run", "--default", "--mode", "bf16-kahan", "--steps", "2", "--no-pdf", "--out", str(out)};
    const CliOutcome first = runCli(args);
    QVERIFY2(first.exitCode == 0, first.describe());
    const auto before = fs::last_write_time(out / "metrics.jsonl");
    const CliOutcome second = runCli(args);
    QVERIFY2(second.exitCode == 2 && second.err.contains("--overwrite"), second.describe());
    QVERIFY(fs::last_write_time(out / "metrics.jsonl") == before);
    QCOMPARE(readMetricsJsonl(out / "metrics.jsonl").size(), size_t(2));
    const CliOutcome replaced = runCli({"run", "--default", "--mode", "bf16-kahan", "--steps", "3", "--no-pdf", "--out", str(out), "--overwrite"});
    QVERIFY2(replaced.exitCode == 0, replaced.describe());
    QCOMPARE(readMetricsJsonl(out / "metrics.jsonl").size(), size_t(3));
  }

  void cliRefusesALockedFolder() {
    if (plab::test::cliPath().isEmpty()) QSKIP("PLAB_CLI not set (run through ctest)");
    QTemporaryDir tmp;
    const fs::path out = tmp.path().toStdString();
    RunFolderLock held(out, false);  // as a run in another process would
    const CliOutcome o = runCli({"run", "--default", "--mode", "bf16-kahan", "--steps", "1", "--no-pdf", "--overwrite", "--out", str(out)});
    QVERIFY2(o.exitCode == 2 && o.err.contains("in use"), o.describe());
  }

  // Without --out, every CLI run gets a new folder in the workspace the app lists.
  void cliDefaultFoldersAreUniqueInTheWorkspace() {
    if (plab::test::cliPath().isEmpty()) QSKIP("PLAB_CLI not set (run through ctest)");
    QTemporaryDir tmp;
    const QByteArray saved = qgetenv("PLAB_WORKSPACE");
    const fs::path workspace = fs::path(tmp.path().toStdString()) / "ws";
    qputenv("PLAB_WORKSPACE", QByteArray::fromStdString(workspace.string()));
    for (int i = 0; i < 2; ++i) {
      const CliOutcome o = runCli({"run", "--default", "--mode", "bf16-kahan", "--steps", "1", "--no-pdf"}, tmp.path());
      QVERIFY2(o.exitCode == 0, o.describe());
    }
    qputenv("PLAB_WORKSPACE", saved);
    int folders = 0;
    for (const auto& e : fs::directory_iterator(workspace)) {
      QVERIFY(fs::exists(e.path() / "metrics.jsonl"));
      ++folders;
    }
    QCOMPARE(folders, 2);
    QVERIFY(!fs::exists(fs::path(tmp.path().toStdString()) / "runs"));
  }

  // The CLI's default workspace is the app's: the same folder under Linux's data location.
  void defaultWorkspaceFollowsXdg() {
    const QByteArray savedWorkspace = qgetenv("PLAB_WORKSPACE"), savedXdg = qgetenv("XDG_DATA_HOME");
    qunsetenv("PLAB_WORKSPACE");
    qputenv("XDG_DATA_HOME", "/data/x");
    QCOMPARE(QString::fromStdString(defaultWorkspaceFolder().string()),
             QString("/data/x/Precision Lab/Precision Lab/workspace"));
    qputenv("PLAB_WORKSPACE", "/elsewhere");
    QCOMPARE(QString::fromStdString(defaultWorkspaceFolder().string()), QString("/elsewhere"));
    qputenv("PLAB_WORKSPACE", savedWorkspace);
    qputenv("XDG_DATA_HOME", savedXdg);
    if (savedXdg.isEmpty()) qunsetenv("XDG_DATA_HOME");
  }
};

QTEST_GUILESS_MAIN(TestRunFolder)
#include "test_run_folder.moc"
