#pragma once
// Writes run folders as the trainer does (config.json, run_info.json,
// metrics.jsonl/csv and layers.csv through MetricsWriter, summary.json),
// without training: what a CLI run on another machine leaves behind.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "report/run_report.h"
#include "train/metrics_writer.h"
#include "train/run_config.h"
#include "util/atomic_file.h"

namespace plab::test {

// The default run config under another name and mode.
inline RunConfig namedConfig(const std::string& name, OptimizerMode mode) {
  RunConfig c = defaultRunConfig();
  c.name = name;
  c.mode = mode;
  return c;
}

inline StepMetrics storedStep(int64_t step, double offset) {
  StepMetrics m;
  m.step = step;
  m.loss = 4.0 * std::exp(-0.1 * static_cast<double>(step)) + offset;
  m.gradNorm = 1;
  m.lr = 1e-4;
  m.roundedAwayFraction = 0.2;
  m.updateRatio = 0.9;
  m.tokensPerSecond = 500;
  m.elapsedSeconds = 0.5 * static_cast<double>(step);
  m.memory.weights = 2 << 20;
  m.memory.moments = 4 << 20;
  if (step % 2 == 0) m.valLoss = m.loss + 0.1;
  m.layers.push_back({"transformer.h.0.mlp.c_fc", 0.3, 0.8});
  m.layers.push_back({"lm_head", 0.1, 0.95});
  return m;
}

// status: "completed", "stopped", "failed", or "" for a run killed before
// it wrote summary.json. layers: the run's layers, each measured on every
// step (empty: storedStep's two). Returns the folder.
inline std::filesystem::path writeStoredRun(const std::filesystem::path& dir, RunConfig config, int steps,
                                            const std::string& status = "completed", double lossOffset = 0,
                                            const std::vector<std::string>& layers = {}) {
  std::filesystem::create_directories(dir);
  config.output_dir = dir.string();
  writeJsonFileAtomically(dir / "config.json", config.toJson());
  RunInfo info;
  info.runName = config.name;
  info.device = "cpu";
  info.modelType = "gpt2";
  info.parameterCount = 1 << 20;
  info.layers = layers.empty() ? std::vector<std::string>{"transformer.h.0.mlp.c_fc", "lm_head"} : layers;
  info.fp32Baseline = fp32AdamWBaseline(info.parameterCount);
  info.optimizerMode = optimizerModeId(config.mode);
  writeJsonFileAtomically(dir / "run_info.json", toJson(info));
  {
    MetricsWriter writer(dir);
    for (int s = 1; s <= steps; ++s) {
      StepMetrics m = storedStep(s, lossOffset);
      if (!layers.empty()) {
        m.layers.clear();
        for (const std::string& layer : layers) m.layers.push_back({layer, 0.3, 0.8});
      }
      writer.write(m);
    }
  }
  if (status.empty()) return dir;
  RunResult r;
  r.status = status == "failed" ? RunStatus::Failed : status == "stopped" ? RunStatus::Stopped : RunStatus::Completed;
  r.stepsDone = steps;
  r.finalLoss = storedStep(steps, lossOffset).loss;
  r.meanTokensPerSecond = 500;
  r.memory = storedStep(steps, lossOffset).memory;
  r.stepPeakBytes = 3 << 20;
  writeJsonFileAtomically(dir / "summary.json", toJson(r));
  return dir;
}

// A crash mid-write: half a JSON line at the end of metrics.jsonl.
inline void appendTornLine(const std::filesystem::path& dir) {
  std::ofstream(dir / "metrics.jsonl", std::ios::app) << "{\"step\": 99, \"loss\": 1.2";
}

}  // namespace plab::test
