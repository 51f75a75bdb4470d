#include "advisor/advisor_runner.h"

#include <QMetaObject>
#include <QPointer>

namespace plab::ui {

AdvisorRunner::AdvisorRunner(QObject* parent) : QObject(parent) {}

AdvisorRunner::~AdvisorRunner() {
  stop();
  join();
}

void AdvisorRunner::join() {
  if (thread_.joinable()) thread_.join();
}

void AdvisorRunner::stop() {
  if (stop_) stop_->store(true);
}

void AdvisorRunner::start(const plab::AdvisorOptions& options) {
  if (running_) return;
  join();  // a finished thread
  running_ = true;
  advice_ = {};
  stop_ = std::make_shared<std::atomic<bool>>(false);
  // The callbacks run on the advisor's thread: each posts to this object's
  // thread, and a QPointer drops what arrives after it is gone. (The
  // destructor joins the thread before QObject's runs, so self stays set
  // while the thread lives; the check costs nothing.)
  QPointer<AdvisorRunner> self(this);
  auto post = [self](auto f) {
    if (QObject* target = self.data()) QMetaObject::invokeMethod(target, std::move(f), Qt::QueuedConnection);
  };
  thread_ = std::thread([options, post, stop = stop_, self] {
    plab::AdvisorCallbacks callbacks;
    callbacks.stop = stop.get();
    callbacks.onProgress = [post, self](int done, int total, const std::string& text) {
      const QString t = QString::fromStdString(text);
      post([self, done, total, t] {
        if (self) emit self->progress(done, total, t);
      });
    };
    callbacks.onLog = [post, self](const std::string& line) {
      const QString l = QString::fromStdString(line);
      post([self, l] {
        if (self) emit self->logLine(l);
      });
    };
    plab::Advice advice = plab::runAdvisor(options, callbacks);
    post([self, advice = std::move(advice)]() mutable {
      if (!self) return;
      self->advice_ = std::move(advice);
      self->running_ = false;
      emit self->finished();
    });
  });
}

}  // namespace plab::ui
