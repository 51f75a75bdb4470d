#pragma once
// A completed run as the verdict tests need it: the config at a seed, named
// as `run --seeds` names it, with its final val loss and one step of metrics.
#include <cstdint>
#include <string>

#include "report/run_report.h"

namespace plab::test {

inline RunRecord finishedRun(RunConfig c, uint64_t seed, double valLoss) {
  RunRecord r;
  c.seed = seed;
  c.name += "-s" + std::to_string(seed);
  r.config = c;
  r.result.status = RunStatus::Completed;
  r.result.stepsDone = c.steps;
  r.result.finalValLoss = valLoss;
  r.steps.push_back(StepMetrics{});
  return r;
}

}  // namespace plab::test
