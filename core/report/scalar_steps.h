#pragma once
// A run's steps without their per-layer records: the figures the runs
// table, the verdicts and the loss / update-lost / rounded-away / loss-scale
// charts draw. A metrics.jsonl line with per-layer statistics is tens of
// KiB; its scalar part a few dozen numbers, so a workspace of a thousand
// runs can be listed from these alone (report/run_index.h) and a run's
// per-layer records read only when a view needs them. Torch-free.
#include <vector>

#include <nlohmann/json.hpp>

#include "train/step_metrics.h"

namespace plab::report {

// The step without layers, windowLayers, fp16GradLayers, gemmLayers,
// shadowGemm and shadowRecipes; every other field as it was.
StepMetrics scalarStep(const StepMetrics& m);
std::vector<StepMetrics> scalarSteps(const std::vector<StepMetrics>& steps);

// Column by column: "step" and every figure measured at each step (loss,
// grad_norm, lr, tokens_per_second, elapsed_seconds) as one base64 string
// of 64-bit little-endian values (util/base64.h: exact, NaN and infinities
// kept, and a few strings to parse per run instead of a number per figure);
// the sparse figures as {"at": [positions], "value": [...]}, a field a step
// did not measure absent, not a repeat, NaN as null as in metrics.jsonl. The
// reader throws ConfigError for anything it did not write (wrong types,
// lengths, positions out of range or not increasing, steps not increasing).
nlohmann::json scalarStepsToJson(const std::vector<StepMetrics>& steps);
std::vector<StepMetrics> scalarStepsFromJson(const nlohmann::json& j);

}  // namespace plab::report
