#pragma once
// Runs plab::runAdvisor on a thread of its own and reports back on the UI
// thread: progress and log lines as they come, the Advice once at the end.
// stop() asks the advisor to end at its next step; the destructor stops and
// joins, so closing the dialog never leaves the thread behind.
#include <QObject>
#include <QString>
#include <atomic>
#include <memory>
#include <thread>

#include "advisor/advisor.h"

namespace plab::ui {

class AdvisorRunner : public QObject {
  Q_OBJECT
 public:
  explicit AdvisorRunner(QObject* parent = nullptr);
  ~AdvisorRunner() override;

  void start(const plab::AdvisorOptions& options);  // ignored while running
  void stop();
  bool running() const { return running_; }
  const plab::Advice& advice() const { return advice_; }  // valid after finished()

 signals:
  void progress(int done, int total, const QString& text);
  void logLine(const QString& line);
  void finished();

 private:
  void join();
  std::thread thread_;
  std::shared_ptr<std::atomic<bool>> stop_;
  bool running_ = false;
  plab::Advice advice_;
};

}  // namespace plab::ui
