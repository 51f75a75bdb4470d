#pragma once
// A run's steps without their per-layer records: the figures the runs
// table, the verdicts and the loss / update-lost / rounded-away / loss-scale
// charts draw. A metrics.jsonl line with per-layer statistics is tens of
// KiB; its scalar part a few dozen numbers, so a workspace of a thousand
// runs can be listed from these alone (report/run_index.h) and a run's
// per-layer records read only when a view needs them. Torch-free.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "train/step_metrics.h"

namespace plab::report {

// The step without layers, windowLayers, fp16GradLayers, gemmLayers,
// shadowGemm and shadowRecipes; every other field as it was.
StepMetrics scalarStep(const StepMetrics& m);
std::vector<StepMetrics> scalarSteps(const std::vector<StepMetrics>& steps);

// On disk (report/run_index.h) in two parts: `columns`, the figures every
// step measures (step, loss, grad_norm, lr, tokens_per_second,
// elapsed_seconds) as raw little-endian 64-bit values, one column after the
// other (48 bytes a step: exact, NaN and infinities kept, and nothing to
// parse); `sparse`, JSON of the rest ({"val_loss": {"at": [positions],
// "value": [...]}, ...}: a field a step did not measure is absent, not a
// repeat, NaN as null as in metrics.jsonl; the memory breakdown where it
// changes). Listing a thousand runs parsed a JSON number per figure; the
// columns are copied. unpackScalarSteps throws
// ConfigError for anything pack did not write (a size that is not whole
// steps, steps not increasing from 1, wrong types, positions out of range).
struct PackedSteps {
  nlohmann::json sparse;
  std::string columns;
};
inline constexpr size_t kPackedStepBytes = 48;
PackedSteps packScalarSteps(const std::vector<StepMetrics>& steps);
std::vector<StepMetrics> unpackScalarSteps(const nlohmann::json& sparse, std::string_view columns);

}  // namespace plab::report
