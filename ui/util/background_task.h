#pragma once
// Runs a function on a short-lived QThread and delivers its result (or the
// exception text) on the owner's thread. The owner must call waitAll() in
// its destructor so that no result is posted to a destroyed object.
#include <QList>
#include <QMetaObject>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QThread>
#include <exception>
#include <functional>
#include <memory>

namespace plab::ui {

class BackgroundTasks {
 public:
  explicit BackgroundTasks(QObject* owner) : owner_(owner) {}
  ~BackgroundTasks() { waitAll(); }

  template <typename T>
  void run(std::function<T()> work, std::function<void(const T&)> done,
           std::function<void(const QString&)> failed) {
    QObject* owner = owner_;
    QThread* thread = QThread::create([owner, work = std::move(work), done = std::move(done),
                                       failed = std::move(failed)] {
      try {
        auto result = std::make_shared<T>(work());
        QMetaObject::invokeMethod(owner, [done, result] { done(*result); }, Qt::QueuedConnection);
      } catch (const std::exception& e) {
        const QString message = QString::fromUtf8(e.what());
        QMetaObject::invokeMethod(owner, [failed, message] { failed(message); }, Qt::QueuedConnection);
      } catch (...) {
        QMetaObject::invokeMethod(owner, [failed] { failed("unknown error"); }, Qt::QueuedConnection);
      }
    });
    QObject::connect(thread, &QThread::finished, thread, &QObject::deleteLater);
    threads_.removeAll(QPointer<QThread>());  // forget finished, deleted threads
    threads_.append(thread);
    thread->start();
  }

  void waitAll() {
    for (const QPointer<QThread>& t : threads_)
      if (t) t->wait();
    threads_.clear();
  }

  bool busy() const {
    for (const QPointer<QThread>& t : threads_)
      if (t && t->isRunning()) return true;
    return false;
  }

 private:
  QObject* owner_;
  QList<QPointer<QThread>> threads_;
};

}  // namespace plab::ui
