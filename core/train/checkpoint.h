#pragma once
// A training checkpoint (checkpoint-N/ of a run folder) and resuming from it.
// The folder holds model.safetensors + config.json (the weights, as
// saveCheckpoint writes them), optimizer.safetensors (moments, Kahan buffers,
// master weights), trainer_state.json (the step, the optimizer's step
// counts, the data sampler and the run's trajectory settings,
// train/trajectory_settings.h) and, written last, checksums.json (the size
// and sha256 of every other file, train/checkpoint_manifest.h).
//
// Everything in it is read as hostile input: resuming checks every file
// against checksums.json, then validates the whole folder against the run's
// config and its live model and optimizer before it changes anything, and
// refuses with a ConfigError naming the file and the field.
#include <cstdint>
#include <filesystem>
#include <map>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "distributed/sharded_adamw.h"
#include "model/causal_lm.h"
#include "precision/precision_adamw.h"
#include "train/run_config.h"

namespace plab {

// trainer_state.json, checked for structure and types (not yet against a run).
struct TrainerState {
  int64_t step = 0;                            // steps 1..step are done
  std::string dataSampler;                     // std::mt19937_64 in its text form
  int64_t optimizerStep = 0;                   // PrecisionAdamW's own count
  std::map<std::string, int64_t> parameterSteps;  // per parameter, by name
  nlohmann::json trajectory;  // trajectorySettings of the run that wrote it (an object)
  // fp16-mixed: the loss scaler's state (DynamicLossScale::toJson, as
  // GradScaler.state_dict()); null in the other modes.
  nlohmann::json lossScale;
  // "native" or "upcast": the CPU path the run's bf16 products took
  // (model/bf16_linear.h); "" in checkpoints written before it was measured.
  std::string cpuBf16Gemm;
};

// Reads trainer_state.json: a regular file of at most kMaxTrainerStateBytes,
// nesting capped, exactly the keys above, integers that are integers (not
// 1e30, not "5") and fit int64, a sampler state that reads back as itself.
// Throws ConfigError naming the file and the field.
inline constexpr uint64_t kMaxTrainerStateBytes = 16ull << 20;
TrainerState readTrainerState(const std::filesystem::path& file);

// Writes dir/ (created if needed): the model, the optimizer state and
// trainer_state.json for `step` (with the loss scaler's state when
// lossScale is not null: fp16-mixed).
void writeCheckpoint(const std::filesystem::path& dir, CausalLM& model, const PrecisionAdamW& optimizer,
                     const RunConfig& config, int64_t step, const std::mt19937_64& sampler,
                     const nlohmann::json& lossScale = nullptr);
// The same for a data-parallel run's optimizer: its state gathered from
// every rank when sharded, so every rank calls it (see trainer.cpp).
void writeCheckpoint(const std::filesystem::path& dir, CausalLM& model, const ShardedAdamW& optimizer,
                     const RunConfig& config, int64_t step, const std::mt19937_64& sampler,
                     const nlohmann::json& lossScale = nullptr);

// Validates dir against the run (config, model after its precision plan,
// optimizer built for it): every file as checksums.json records it
// (verifyCheckpointManifest); 1 <= step < steps;
// the folder's N equal to the step; every parameter's step count equal to
// the step and no count for an unknown parameter; the trajectory settings
// (trajectoryChange) and the model's config.json equal to this run's; model.safetensors and
// optimizer.safetensors holding exactly the expected tensors (names, shapes,
// dtypes), none missing, none unknown. Only then loads weights, optimizer
// state and sampler; returns the checkpoint's step. Throws ConfigError.
// In a mode that scales the loss (fp16-mixed) the optimizer's count may be
// below the step (skipped steps), the loss scaler's state must be there and
// is returned in *lossScale (validated by DynamicLossScale::fromJson); in the
// other modes it must be absent.
int64_t resumeFromCheckpoint(const std::filesystem::path& dir, const RunConfig& config, CausalLM& model,
                             PrecisionAdamW& optimizer, std::mt19937_64& sampler,
                             nlohmann::json* lossScale = nullptr);
// Each rank restores its share of a consolidated state saved on any number of ranks.
int64_t resumeFromCheckpoint(const std::filesystem::path& dir, const RunConfig& config, CausalLM& model,
                             ShardedAdamW& optimizer, std::mt19937_64& sampler, nlohmann::json* lossScale = nullptr);

}  // namespace plab
