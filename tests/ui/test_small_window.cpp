// The window fits half of a 1920-pixel screen: the setup tabs and the charts
// scroll instead of holding the window wide (issue 11, small windows).
#include <QScrollArea>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include "main_window.h"
#include "window_waits.h"
#include "support/test_registry.h"

namespace test_small_window {

using plab::ui::MainWindow;

class TestSmallWindow : public QObject {
  Q_OBJECT
 private slots:
  void fitsHalfOfAFullHdScreen() {
    QTemporaryDir workspace;
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    const QSize hint = w.minimumSizeHint();
    QVERIFY2(hint.width() <= 960, qPrintable(QString("minimum width %1").arg(hint.width())));
    QVERIFY2(hint.height() <= 600, qPrintable(QString("minimum height %1").arg(hint.height())));
    w.resize(960, 600);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QCOMPARE(w.width(), 960);
    QCOMPARE(w.height(), 600);
  }

  void everySetupTabScrolls() {
    QTemporaryDir workspace;
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    auto* tabs = w.findChild<QTabWidget*>("setupTabs");
    QVERIFY(tabs);
    QCOMPARE(tabs->count(), 3);
    for (int i = 0; i < tabs->count(); ++i)
      QVERIFY2(qobject_cast<QScrollArea*>(tabs->widget(i)), qPrintable(tabs->tabText(i)));
  }
};

PLAB_TEST_MAIN(TestSmallWindow)
}  // namespace test_small_window
#include "test_small_window.moc"
