// Issue 20.8: Delete moves a run into the freedesktop trash even when the
// data home (~/.local/share) does not exist yet. Qt's moveToTrash then
// "succeeded" into ./files and ./info of the current folder; the workspace
// now creates the data home first, or refuses and leaves the run in place.
#include <QDir>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <unistd.h>

#include <filesystem>

#include "run/workspace.h"
#include "support/run_folders.h"
#include "support/test_registry.h"
#include "util/errors.h"

namespace test_trash {

using namespace plab::ui;
namespace fs = std::filesystem;

namespace {

fs::path path(const QString& p) { return fs::path(p.toStdString()); }

plab::RunConfig namedConfig(const std::string& name) {
  plab::RunConfig c = plab::defaultRunConfig();
  c.name = name;
  c.mode = plab::OptimizerMode::Bf16Plain;
  return c;
}

// HOME (and the current folder) pointed elsewhere for one test.
class ScopedHome {
 public:
  ScopedHome(const QString& home, const QString& cwd)
      : home_(qgetenv("HOME")), dataHome_(qgetenv("XDG_DATA_HOME")), cwd_(QDir::currentPath()) {
    qputenv("HOME", home.toUtf8());
    qunsetenv("XDG_DATA_HOME");
    QDir::setCurrent(cwd);
  }
  ~ScopedHome() {
    qputenv("HOME", home_);
    if (!dataHome_.isEmpty()) qputenv("XDG_DATA_HOME", dataHome_);
    QDir::setCurrent(cwd_);
  }

 private:
  QByteArray home_, dataHome_;
  QString cwd_;
};

}  // namespace

class TestTrash : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void deleteCreatesTheMissingDataHome() {
    QTemporaryDir home, workspace, cwd;
    const ScopedHome scoped(home.path(), cwd.path());
    const QString dataHome = QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation);
    QVERIFY2(dataHome.startsWith(home.path()), qPrintable(dataHome));
    QVERIFY(!QFileInfo::exists(dataHome));
    const fs::path run = plab::test::writeStoredRun(path(workspace.path()) / "r-20250101-000000", namedConfig("r"), 2);
    const QString message = Workspace(workspace.path()).removeRun(QString::fromStdString(run.string()), true);
    QVERIFY2(message.startsWith("moved to the trash: " + dataHome + "/Trash/files/"), qPrintable(message));
    QVERIFY(!fs::exists(run));
    QVERIFY(fs::exists(path(dataHome) / "Trash" / "files" / "r-20250101-000000" / "metrics.jsonl"));
    QVERIFY(fs::exists(path(dataHome) / "Trash" / "info" / "r-20250101-000000.trashinfo"));
    // Nothing landed in the current folder.
    QVERIFY(QDir(cwd.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot).isEmpty());
  }

  void deleteRefusesWhenThereCanBeNoTrash() {
    if (::geteuid() == 0) QSKIP("root writes into a read-only folder");
    QTemporaryDir home, workspace, cwd;
    QVERIFY(QFile::setPermissions(home.path(), QFileDevice::ReadOwner | QFileDevice::ExeOwner));
    const ScopedHome scoped(home.path(), cwd.path());
    const fs::path run = plab::test::writeStoredRun(path(workspace.path()) / "r-20250101-000000", namedConfig("r"), 2);
    try {
      Workspace(workspace.path()).removeRun(QString::fromStdString(run.string()), true);
      QFAIL("expected a refusal");
    } catch (const plab::IoError& e) {
      QVERIFY2(std::string(e.what()).find("not deleted") == 0, e.what());
    }
    QVERIFY(fs::exists(run / "metrics.jsonl") && fs::exists(run / "config.json"));
    QVERIFY(QDir(cwd.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot).isEmpty());
    QFile::setPermissions(home.path(), QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
  }
};

PLAB_TEST_GUILESS_MAIN(TestTrash)
}  // namespace test_trash
#include "test_trash.moc"
