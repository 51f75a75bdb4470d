#pragma once
// What the window tests share: showing the main window until the default
// model's overview is in, and saving the screen when PLAB_SCREENSHOT asks
// (under a real X server, QT_QPA_PLATFORM=xcb: the screen as users see it).
#include <QGuiApplication>
#include <QScreen>
#include <QtTest/QtTest>

#include "main_window.h"
#include "panels/model_picker.h"

namespace plab::test {

inline bool shownWithModel(plab::ui::MainWindow& w) {
  w.show();
  return QTest::qWaitForWindowExposed(&w) &&
         QTest::qWaitFor([&] { return w.modelPicker()->hasOverview(); }, 60000);
}

// PLAB_SCREENSHOT=file.png: the whole screen after the charts' queued replots.
inline bool saveScreenIfAsked(int waitMs = 1500) {
  const QString file = qEnvironmentVariable("PLAB_SCREENSHOT");
  if (file.isEmpty() || !QGuiApplication::primaryScreen()) return true;
  QTest::qWait(waitMs);
  return QGuiApplication::primaryScreen()->grabWindow(0).save(file);
}

}  // namespace plab::test
