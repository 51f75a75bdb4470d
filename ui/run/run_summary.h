#pragma once
// The headline numbers of a run, for finished runs (from its RunResult) and
// for runs still in progress (from the steps measured so far).
#include <cstdint>
#include <optional>

#include "report/run_report.h"

namespace plab::ui {

struct RunSummary {
  int64_t stepsDone = 0;
  std::optional<double> finalLoss;
  std::optional<double> finalValLoss;
  int64_t memoryBytes = 0;         // measured training state (0: unknown yet)
  int64_t fp32BaselineBytes = 0;   // all-fp32 AdamW on the same parameters
  double savedFraction = 0;        // 1 - memory / baseline
  double meanRoundedAway = 0;
  double tokensPerSecond = 0;
};

RunSummary summarizeRun(const plab::RunRecord& run, bool finished);

}  // namespace plab::ui
