#pragma once
// One executable per test folder (tests/core, tests/ui) holds every Qt Test
// class of that folder: linking 75 executables against LibTorch was most of
// the suite's build. Each test file registers its class under the file's
// name (test_models.cpp: "test_models"); ctest runs `<runner> test_models`,
// one process per class as before, so a failure names the class and the
// classes share no state. The three macros are QTEST_MAIN,
// QTEST_GUILESS_MAIN and QTEST_APPLESS_MAIN with the same application
// object and set-up, run by the runner instead of being a main() of their own.
#include <QtTest/QtTest>

namespace plab::test {

// A test class's main: makes its application object (or none), runs QTest::qExec.
using TestMain = int (*)(int argc, char** argv);

// Registers `main` under the name of `sourceFile` without folder and
// extension; called by the macros below before main() runs.
bool registerTest(const char* sourceFile, TestMain main);

// The runners' main(): `<runner> NAME [Qt Test arguments]` runs the test
// registered as NAME; `<runner> --list` prints the names.
int runRegisteredTest(int argc, char** argv);

}  // namespace plab::test

// The application object exactly as QTEST_MAIN makes it: Qt's own (internal)
// set-up macros where this Qt has them, else the same steps spelled out.
#if defined(QTEST_QAPP_SETUP) && defined(QTEST_MAIN_SETUP)
#define PLAB_TEST_QAPP_SETUP(Application) QTEST_QAPP_SETUP(Application)
#define PLAB_TEST_MAIN_SETUP() QTEST_MAIN_SETUP()
#else
#define PLAB_TEST_QAPP_SETUP(Application) \
  Application app(argc, argv);            \
  app.setAttribute(Qt::AA_Use96Dpi, true);
#if defined(QT_WIDGETS_LIB)
#define PLAB_TEST_MAIN_SETUP() PLAB_TEST_QAPP_SETUP(QApplication) QTEST_DISABLE_KEYPAD_NAVIGATION
#elif defined(QT_GUI_LIB)
#define PLAB_TEST_MAIN_SETUP() PLAB_TEST_QAPP_SETUP(QGuiApplication)
#else
#define PLAB_TEST_MAIN_SETUP() PLAB_TEST_QAPP_SETUP(QCoreApplication)
#endif
#endif

// The body of Qt's QTEST_MAIN_WRAPPER as a registered function.
#define PLAB_TEST_REGISTER(TestObject, Setup)                                                        \
  namespace {                                                                                        \
  int plabTestMain_##TestObject(int argc, char** argv) {                                             \
    QT_PREPEND_NAMESPACE(QTest::Internal::callInitMain)<TestObject>();                               \
    Setup                                                                                            \
    TestObject tc;                                                                                   \
    QTEST_SET_MAIN_SOURCE_PATH                                                                       \
    return QTest::qExec(&tc, argc, argv);                                                            \
  }                                                                                                  \
  [[maybe_unused]] const bool plabTestRegistered_##TestObject =                                      \
      ::plab::test::registerTest(__FILE__, &plabTestMain_##TestObject);                              \
  }

// QTEST_MAIN: a QApplication where the runner links Qt Widgets (tests/ui),
// a QCoreApplication where it links neither Widgets nor Gui (tests/core).
#define PLAB_TEST_MAIN(TestObject) PLAB_TEST_REGISTER(TestObject, PLAB_TEST_MAIN_SETUP())
// QTEST_GUILESS_MAIN: a QCoreApplication.
#define PLAB_TEST_GUILESS_MAIN(TestObject) PLAB_TEST_REGISTER(TestObject, PLAB_TEST_QAPP_SETUP(QCoreApplication))
// QTEST_APPLESS_MAIN: no application object.
#define PLAB_TEST_NO_APPLICATION
#define PLAB_TEST_APPLESS_MAIN(TestObject) PLAB_TEST_REGISTER(TestObject, PLAB_TEST_NO_APPLICATION)
