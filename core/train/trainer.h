#pragma once
// Runs one training run. Torch-free interface (pimpl) so the UI can hold a
// Trainer on its worker thread without torch headers.
#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "distributed/world_info.h"
#include "train/run_config.h"
#include "train/step_metrics.h"

namespace plab {

class Trainer {
 public:
  struct Callbacks {
    std::function<void(const RunInfo&)> onStart;
    std::function<void(const StepMetrics&)> onStep;
    std::function<void(const std::string&)> onLog;       // human-readable progress lines
  };

  // world: this process's place in a data-parallel job (distributed/world_info.h);
  // only rank 0 writes config.output_dir.
  explicit Trainer(RunConfig config, WorldInfo world = {});
  ~Trainer();

  // Blocking; call it on a worker thread. Never throws: bad input, NaN loss
  // and I/O errors end the run with RunStatus::Failed and a clear message.
  // When config.output_dir is set, metrics stream there as they are measured
  // (metrics.jsonl, metrics.csv, layers.csv, config.json, run_info.json).
  RunResult run(const Callbacks& callbacks);

  // Thread-safe controls.
  void pause();
  void resume();
  void stop();
  // Stops like stop(), and the run ends Failed with `reason` (its launcher
  // is gone: nobody will see it finish).
  void abort(const std::string& reason);
  bool paused() const;

  const RunConfig& config() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace plab
