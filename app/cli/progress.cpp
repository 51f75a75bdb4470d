#include "progress.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <sstream>

namespace plab::cli {

namespace {

std::string duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const long s = std::lround(seconds);
  std::ostringstream o;
  if (s >= 3600) o << s / 3600 << 'h' << std::setw(2) << std::setfill('0') << (s % 3600) / 60 << 'm';
  else o << s / 60 << ':' << std::setw(2) << std::setfill('0') << s % 60;
  return o.str();
}

}  // namespace

ProgressPrinter::ProgressPrinter(std::string runName, int64_t totalSteps, bool terminal)
    : runName_(std::move(runName)), total_(std::max<int64_t>(1, totalSteps)), terminal_(terminal) {}

void ProgressPrinter::step(const StepMetrics& m) {
  const double eta = m.step > 0 ? m.elapsedSeconds / double(m.step) * double(total_ - m.step) : NAN;
  if (m.roundedAwayFraction) {
    lastRoundedAway_ = *m.roundedAwayFraction;
    lastRoundedAwayStep_ = m.step;
  }
  std::ostringstream info;
  info << "step " << m.step << '/' << total_ << "  loss " << std::fixed << std::setprecision(4) << m.loss;
  if (lastRoundedAwayStep_ > 0) {
    info << "  rounded away " << std::setprecision(1) << 100 * lastRoundedAway_ << '%';
    if (lastRoundedAwayStep_ != m.step) info << " (step " << lastRoundedAwayStep_ << ')';
  }
  info << "  " << std::setprecision(0) << m.tokensPerSecond << " tok/s  ETA " << duration(eta);
  if (terminal_) {
    const int width = 24;
    const int filled = static_cast<int>(width * m.step / total_);
    std::string bar = "[" + std::string(filled, '#') + std::string(width - filled, '.') + "]";
    std::fprintf(stderr, "\r\033[K%s %s %s", runName_.c_str(), bar.c_str(), info.str().c_str());
    std::fflush(stderr);
    barShown_ = true;
  } else {
    const int64_t every = std::max<int64_t>(1, total_ / 20);
    if (m.step == 1 || m.step % every == 0 || m.step == total_)
      std::fprintf(stderr, "%s: %s\n", runName_.c_str(), info.str().c_str());
  }
}

void ProgressPrinter::log(const std::string& line) {
  if (barShown_) std::fprintf(stderr, "\r\033[K");
  std::fprintf(stderr, "%s\n", line.c_str());
  barShown_ = false;
}

void ProgressPrinter::finish() {
  if (barShown_) std::fprintf(stderr, "\n");
  barShown_ = false;
}

}  // namespace plab::cli
