#include "notebook/gui_wait.h"

#include <QAbstractEventDispatcher>
#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QEvent>
#include <QTimer>

#include "notebook/process_stats.h"

namespace plab::bench {

bool processUntilIdle(int maxMs) {
  QAbstractEventDispatcher* dispatcher = QAbstractEventDispatcher::instance();
  const QDeadlineTimer deadline(maxMs, Qt::PreciseTimer);
  while (!deadline.hasExpired()) {
    QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
    if (!dispatcher->processEvents(QEventLoop::AllEvents)) return true;
  }
  return false;
}

bool waitUntil(const std::function<bool()>& done, int timeoutMs) {
  QAbstractEventDispatcher* dispatcher = QAbstractEventDispatcher::instance();
  const QDeadlineTimer deadline(timeoutMs, Qt::PreciseTimer);
  // Bounds each sleep: done() may turn true without an event of its own.
  QTimer heartbeat;
  heartbeat.setInterval(50);
  heartbeat.start();
  while (!done()) {
    if (deadline.hasExpired()) return false;
    QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
    dispatcher->processEvents(QEventLoop::AllEvents | QEventLoop::WaitForMoreEvents);
  }
  return true;
}

void runFor(int ms) {
  const int64_t end = monotonicNs() + static_cast<int64_t>(ms) * 1000000;
  QTimer wake;  // wakes the loop on time
  wake.setSingleShot(true);
  wake.start(ms);
  waitUntil([end] { return monotonicNs() >= end; }, ms + 1000);
}

bool EventWatch::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() == type_) {
    lastNs_ = monotonicNs();
    ++count_;
  }
  return QObject::eventFilter(watched, event);
}

}  // namespace plab::bench
