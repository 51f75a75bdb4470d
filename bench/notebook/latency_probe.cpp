#include "notebook/latency_probe.h"

#include <QCoreApplication>
#include <QEvent>
#include <algorithm>
#include <chrono>
#include <cmath>

#include "notebook/process_stats.h"

namespace plab::bench {
namespace {

const QEvent::Type kProbeEvent = static_cast<QEvent::Type>(QEvent::registerEventType());

struct ProbeEvent : QEvent {
  explicit ProbeEvent(int64_t postedNs) : QEvent(kProbeEvent), postedNs(postedNs) {}
  int64_t postedNs;
};

}  // namespace

LatencyProbe::LatencyProbe(int periodMs, QObject* parent) : QObject(parent), periodMs_(periodMs) {}

LatencyProbe::~LatencyProbe() {
  running_ = false;
  if (poster_.joinable()) poster_.join();
}

void LatencyProbe::setAction(int everyNth, std::function<void()> action) {
  everyNth_ = everyNth;
  action_ = std::move(action);
}

void LatencyProbe::start() {
  running_ = true;
  poster_ = std::thread([this] {
    auto next = std::chrono::steady_clock::now();
    while (running_) {
      QCoreApplication::postEvent(this, new ProbeEvent(monotonicNs()));
      next += std::chrono::milliseconds(periodMs_);
      std::this_thread::sleep_until(next);
    }
  });
}

void LatencyProbe::stop() {
  running_ = false;
  if (poster_.joinable()) poster_.join();
  QCoreApplication::sendPostedEvents(this, kProbeEvent);
}

std::vector<double> LatencyProbe::latenciesMs() const {
  std::vector<double> out;
  out.reserve(samples_.size());
  for (const Sample& s : samples_) out.push_back(s.latencyMs());
  return out;
}

bool LatencyProbe::event(QEvent* e) {
  if (e->type() != kProbeEvent) return QObject::event(e);
  samples_.push_back({static_cast<ProbeEvent*>(e)->postedNs, monotonicNs()});
  if (everyNth_ > 0 && action_ && samples_.size() % static_cast<size_t>(everyNth_) == 0) {
    const int64_t begin = monotonicNs();
    action_();
    actionMs_.push_back(msBetween(begin, monotonicNs()));
  }
  return true;
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::ceil(p / 100.0 * static_cast<double>(values.size()));
  const size_t i = static_cast<size_t>(std::clamp(rank, 1.0, static_cast<double>(values.size()))) - 1;
  return values[i];
}

}  // namespace plab::bench
