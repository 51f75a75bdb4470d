#pragma once
// What a training run reports, step by step. Torch-free; crosses the worker
// thread to the UI by value.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/module_tree.h"
#include "precision/memory_breakdown.h"

namespace plab {

struct LayerStepMetrics {
  std::string layer;                // module path
  double roundedAwayFraction = 0;   // rounded-away / intended-non-zero elements
  double updateRatio = 0;           // ||effective|| / ||intended||
};

struct StepMetrics {
  int64_t step = 0;                 // 1-based optimizer step
  double loss = 0;                  // mean train loss over the accumulated micro-batches
  double gradNorm = 0;              // before clipping
  double lr = 0;
  double roundedAwayFraction = 0;   // over all parameters (bf16 and fp32)
  double updateRatio = 0;
  double tokensPerSecond = 0;
  double elapsedSeconds = 0;
  std::optional<double> valLoss;    // set on evaluation steps
  MemoryBreakdown memory;           // measured
  std::vector<LayerStepMetrics> layers;  // empty on steps without layer stats
};

struct RunInfo {                    // sent once, before step 1
  std::string runName;
  std::string device;               // "cpu", "cuda:0"
  std::string modelType;
  std::string tokenizer;            // "byte-level-bpe (/m/tokenizer.json)", "bytes", ...
  ModuleNode modules;
  int64_t parameterCount = 0;
  int64_t bf16ParameterCount = 0;
  std::vector<std::string> layers;  // modules with parameters, in model order
  MemoryBreakdown predictedMemory;
  MemoryBreakdown measuredMemory;
  MemoryBreakdown fp32Baseline;
  int64_t tokensPerStep = 0;
  int64_t trainTokens = 0;
  std::string cudaAllocatorSummary; // empty on CPU
};

enum class RunStatus { Completed, Stopped, Failed };

struct RunResult {
  RunStatus status = RunStatus::Completed;
  std::string message;              // the error for Failed (e.g. "loss became NaN at step 12")
  int64_t stepsDone = 0;
  double finalLoss = 0;
  std::optional<double> finalValLoss;
  double meanTokensPerSecond = 0;
  double meanRoundedAwayFraction = 0;
  MemoryBreakdown memory;
  double memorySavedFraction = 0;   // 1 - memory.total / fp32Baseline.total
};

nlohmann::json toJson(const StepMetrics& m);
StepMetrics stepMetricsFromJson(const nlohmann::json& j);
nlohmann::json toJson(const RunInfo& i);
nlohmann::json toJson(const RunResult& r);
std::string runStatusId(RunStatus s);  // "completed", "stopped", "failed"

}  // namespace plab
