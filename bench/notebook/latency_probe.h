#pragma once
// Input latency of the GUI thread: a helper thread posts a timestamped
// event to a receiver on the GUI thread every period; the latency of an
// event is when the GUI thread processed it minus when it was posted — what
// a key press or a click arriving at that moment would have waited. An
// optional action (a tab switch) runs in the handler of every nth event and
// is timed too.
#include <QObject>
#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

namespace plab::bench {

class LatencyProbe : public QObject {
 public:
  explicit LatencyProbe(int periodMs, QObject* parent = nullptr);
  ~LatencyProbe() override;

  void setAction(int everyNth, std::function<void()> action);
  void start();
  // Stops posting and processes the events already posted (they count).
  void stop();

  struct Sample {
    int64_t postedNs, processedNs;
    double latencyMs() const { return static_cast<double>(processedNs - postedNs) / 1e6; }
  };
  const std::vector<Sample>& samples() const { return samples_; }
  std::vector<double> latenciesMs() const;
  const std::vector<double>& actionMs() const { return actionMs_; }

 protected:
  bool event(QEvent* event) override;

 private:
  int periodMs_;
  int everyNth_ = 0;
  std::function<void()> action_;
  std::atomic<bool> running_{false};
  std::thread poster_;
  std::vector<Sample> samples_;
  std::vector<double> actionMs_;
};

// The p-th percentile (0-100) by nearest rank; 0 for no values.
double percentile(std::vector<double> values, double p);

}  // namespace plab::bench
