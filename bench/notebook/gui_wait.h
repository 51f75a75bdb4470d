#pragma once
// Driving the GUI thread's event loop from a measurement without adding
// latency of its own (QTest::qWait sleeps in 10 ms steps): waits sleep in
// the event loop until an event arrives, and "idle" means the dispatcher
// found nothing ready to process.
#include <QObject>
#include <cstdint>
#include <functional>

class QEvent;

namespace plab::bench {

// Processes posted events, due timers and paints until none is left (or
// maxMs passed: then returns false). Timers not yet due are left.
bool processUntilIdle(int maxMs = 10000);

// Runs the event loop, sleeping until events arrive, until done() holds
// (true) or timeoutMs passed (false). done() is checked after every event
// batch and at least every 50 ms.
bool waitUntil(const std::function<bool()>& done, int timeoutMs);

// Runs the event loop for ms milliseconds.
void runFor(int ms);

// Notes when the watched objects receive an event of a type (Paint for a
// widget, Timer for a QTimer): the monotonic time (ns) it began and how many.
class EventWatch : public QObject {
 public:
  explicit EventWatch(int eventType, QObject* parent = nullptr) : QObject(parent), type_(eventType) {}
  void watch(QObject* object) { object->installEventFilter(this); }
  int64_t lastNs() const { return lastNs_; }
  int count() const { return count_; }

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  int type_;
  int64_t lastNs_ = 0;
  int count_ = 0;
};

}  // namespace plab::bench
