#pragma once
// The small CPU training run the trainer tests start from: the embedded
// tiny GPT-2, batch 4 x 16, statistics on every step, windows of 2. Each
// test then sets what it is about.
#include "train/run_config.h"

namespace plab::test {

inline RunConfig smallTrainingRun(OptimizerMode mode, int64_t steps) {
  RunConfig c = defaultRunConfig();
  c.name = "test-" + optimizerModeId(mode);
  c.mode = mode;
  c.steps = steps;
  c.batch_size = 4;
  c.seq_len = 16;
  c.warmup_steps = 0;
  c.layer_stats_every = 1;
  c.update_window = 2;
  c.device = "cpu";
  return c;
}

}  // namespace plab::test
