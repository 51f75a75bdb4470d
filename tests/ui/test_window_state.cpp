// The window's size, splitters, setup tab and last model survive a restart
// (issue 11). Uses a private INI file, never the user's settings.
#include <QComboBox>
#include <QSettings>
#include <QSplitter>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include "main_window.h"
#include "window_waits.h"
#include "panels/model_picker.h"
#include "support/test_registry.h"
#include "window_state.h"

namespace test_window_state {

using plab::ui::MainWindow;

class TestWindowState : public QObject {
  Q_OBJECT
 private slots:
  void sizeSplittersTabAndModelAreRestored() {
    QTemporaryDir dir;
    QSettings settings(dir.filePath("state.ini"), QSettings::IniFormat);
    int savedSetupWidth = 0;
    {
      QTemporaryDir workspace;
      MainWindow w(workspace.path());
      QVERIFY(plab::test::waitForRuns(w));
      w.resize(1000, 640);
      w.show();
      QVERIFY(QTest::qWaitForWindowExposed(&w));
      auto* splitter = w.findChild<QSplitter*>("mainSplitter");
      QVERIFY(splitter);
      splitter->setSizes({520, 460});
      savedSetupWidth = splitter->sizes().front();
      w.findChild<QTabWidget*>("setupTabs")->setCurrentIndex(2);
      plab::ModelSpec init;
      init.source = "embedded-init";
      w.modelPicker()->setModelSpec(init);
      plab::ui::saveWindowState(w, settings);
    }
    settings.sync();

    QTemporaryDir workspace;

    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    plab::ui::restoreWindowState(w, settings);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QCOMPARE(w.size(), QSize(1000, 640));
    // The setup side has stretch 0: any difference in width goes to the results side.
    QCOMPARE(w.findChild<QSplitter*>("mainSplitter")->sizes().front(), savedSetupWidth);
    QCOMPARE(w.findChild<QTabWidget*>("setupTabs")->currentIndex(), 2);
    QCOMPARE(w.modelPicker()->spec().source, std::string("embedded-init"));
    QTRY_VERIFY_WITH_TIMEOUT(!w.modelPicker()->isInspecting(), 60000);
  }

  void emptySettingsKeepTheDefaults() {
    QTemporaryDir dir;
    const QSettings settings(dir.filePath("none.ini"), QSettings::IniFormat);
    QTemporaryDir workspace;
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    plab::ui::restoreWindowState(w, settings);
    QCOMPARE(w.modelPicker()->spec().source, std::string("embedded"));
    QCOMPARE(w.findChild<QTabWidget*>("setupTabs")->currentIndex(), 0);
  }
};

PLAB_TEST_MAIN(TestWindowState)
}  // namespace test_window_state
#include "test_window_state.moc"
