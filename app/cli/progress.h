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
};

}  // namespace plab::cli
