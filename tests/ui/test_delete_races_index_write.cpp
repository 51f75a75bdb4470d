// Issue 35: the window indexes a run that just finished (index.json) on a
// background thread; a Delete of that run in the meantime raced it — the
// write landed in the folder while it was being removed ("Directory not
// empty", a folder left holding only index.json) or failed after it went
// ("could not index"). The write is held here, deterministically, between
// reading the folder and writing its index, while Delete runs: Delete must
// cancel it, and nothing may be written or reported afterwards.
#include <QPlainTextEdit>
#include <QSemaphore>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <filesystem>

#include "main_window.h"
#include "run/run_folder_writes.h"
#include "support/run_folders.h"
#include "support/test_registry.h"
#include "window_waits.h"

namespace test_delete_races_index_write {

using namespace plab::ui;
namespace fs = std::filesystem;

class TestDeleteRacesIndexWrite : public QObject {
  Q_OBJECT
 private slots:
  void deleteCancelsTheIndexWriteOfAJustFinishedRun() {
    QTemporaryDir workspace;
    const fs::path dir = plab::test::writeStoredRun(fs::path(workspace.path().toStdString()) / "run1-bf16-20250101-000000",
                                                    plab::test::namedConfig("run1-bf16", plab::OptimizerMode::Bf16Plain), 3);
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    QCOMPARE(w.store()->size(), 1);
    QVERIFY(!w.writingRunFiles());

    // The index write stops after reading the folder, before writing.
    QSemaphore reached, proceed;
    w.folderWrites()->setBeforeWriteForTests([&](const QString&) {
      reached.release();
      proceed.acquire();
    });
    emit w.controller()->runFinished(0);  // what the controller says when a run ends: the window indexes it
    QVERIFY(reached.tryAcquire(1, 60000));

    // Delete overtakes the held write.
    QVERIFY(w.deleteRun(0));
    QCOMPARE(w.store()->size(), 0);
    QVERIFY(!fs::exists(dir));

    proceed.release();
    QVERIFY(QTest::qWaitFor([&] { return !w.writingRunFiles(); }, 60000));
    QTest::qWait(50);  // the write's outcome, posted to the window

    // Nothing was written into the removed folder (nor was it recreated),
    // and no failure was reported for a write that was given up.
    QVERIFY(!fs::exists(dir));
    const QString log = w.findChild<QPlainTextEdit*>("logPanel")->toPlainText();
    QVERIFY2(!log.contains("could not index"), qPrintable(log));
    QVERIFY2(w.lastError().isEmpty(), qPrintable(w.lastError()));
  }

  // The same hold without a Delete: the write goes through (the hold itself
  // does not cancel anything).
  void aHeldWriteWithoutDeleteStillWritesTheIndex() {
    QTemporaryDir workspace;
    const fs::path dir = plab::test::writeStoredRun(fs::path(workspace.path().toStdString()) / "run1-bf16-20250101-000000",
                                                    plab::test::namedConfig("run1-bf16", plab::OptimizerMode::Bf16Plain), 3);
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    fs::remove(dir / "index.json");  // written by the listing: the finished run's write must make it again
    QSemaphore reached, proceed;
    w.folderWrites()->setBeforeWriteForTests([&](const QString&) {
      reached.release();
      proceed.acquire();
    });
    emit w.controller()->runFinished(0);
    QVERIFY(reached.tryAcquire(1, 60000));
    QVERIFY(!fs::exists(dir / "index.json"));
    proceed.release();
    QVERIFY(QTest::qWaitFor([&] { return !w.writingRunFiles(); }, 60000));
    QVERIFY(fs::exists(dir / "index.json"));
  }
};

PLAB_TEST_MAIN(TestDeleteRacesIndexWrite)
}  // namespace test_delete_races_index_write
#include "test_delete_races_index_write.moc"
