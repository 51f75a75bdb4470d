#pragma once
// The main window reads a workspace's runs (and opened folders) in the
// background: a test that looks at them waits until they are listed.
#include <QTest>

#include "main_window.h"

namespace plab::test {

inline bool waitForRuns(const plab::ui::MainWindow& window, int timeoutMs = 60000) {
  return QTest::qWaitFor([&] { return !window.isLoadingRuns(); }, timeoutMs);
}

}  // namespace plab::test
