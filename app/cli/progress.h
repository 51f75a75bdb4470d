#pragma once
// Training progress on stderr: a redrawn bar on a terminal, plain periodic
// lines otherwise (logs, CI).
#include <cstdint>
#include <string>

#include "train/step_metrics.h"

namespace plab::cli {

class ProgressPrinter {
 public:
  ProgressPrinter(std::string runName, int64_t totalSteps, bool terminal);
  void step(const StepMetrics& m);
  void log(const std::string& line);  // a whole line, keeping the bar intact
  void finish();

 private:
  std::string runName_;
  int64_t total_;
  bool terminal_;
  bool barShown_ = false;
  // The last measured rounded-away share and its step: the steps between
  // statistics steps measure none, and the line says which step it is from.
  double lastRoundedAway_ = 0;
  int64_t lastRoundedAwayStep_ = 0;
};

}  // namespace plab::cli
