#pragma once
// ZeRO-1 on a flat view: every parameter, in model order, laid end to end
// and cut into one contiguous range per rank. Each rank keeps the optimizer
// state (AdamW moments, mixed's fp32 masters, Kahan buffers) of its range
// only and steps it with the same PrecisionAdamW and kernels as one process
// (a parameter cut by a range boundary is stepped as flat slices); the
// stepped weights then go from their owner to every rank as the owner holds
// them (bf16 bits stay bf16 bits). Philox streams are keyed by a
// parameter's position in the whole model (TrainableParam::streamIndex) and
// the element's index in the parameter (firstElement), so every mode steps
// bit for bit as the replicated state does from the same averaged gradients. The statistics are summed over the
// ranks; checkpoints are one consolidated state (stateTensors gathers it).
// Unsharded (one rank, or sharding turned off) every call forwards to one
// PrecisionAdamW over all parameters, unchanged.
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "distributed/flat_shards.h"
#include "precision/precision_adamw.h"

namespace plab {

class DataParallel;  // distributed/data_parallel.h

// On by default when there is more than one rank (torch's ZeRO-1);
// PLAB_SHARD_OPTIMIZER_STATE=0 keeps every rank's state whole.
bool optimizerStateSharding(int worldSize);

class ShardedAdamW {
 public:
  // Collective when sharded (every rank measures its state for the others).
  ShardedAdamW(std::vector<TrainableParam> params, OptimizerMode mode, AdamWOptions options, uint64_t seed,
               UpdateStatsOptions stats, DataParallel& dp, bool shard);
  ~ShardedAdamW();

  bool sharded() const;
  // Collective when sharded: steps this rank's parameters, sends them to
  // every rank and sums the statistics over the ranks.
  OptimizerStepStats step(double lr, bool collectStats);
  void zeroGrad();  // every parameter's gradient, owned or not
  int64_t stepCount() const;

  // The job's training state as one copy: the weights and gradients this
  // rank holds plus every rank's optimizer state, each measured from the
  // tensors that rank holds (at construction: they keep their size). Equal
  // to the unsharded figure, so "memory saved" compares like with like.
  MemoryBreakdown measuredMemory() const;
  // What each rank holds: the weights and gradients (replicated) and its
  // own optimizer state.
  std::vector<MemoryBreakdown> rankMemory() const;
  int64_t statisticsBytes() const;  // this rank's update-lost windows

  // The checkpoint interface of PrecisionAdamW over every parameter.
  // stateTensors is collective when sharded: every rank must call it, and
  // only rank 0 gets the consolidated state (the others get nothing).
  std::vector<std::pair<std::string, torch::Tensor>> stateTensors() const;
  nlohmann::json stepCounts() const;
  std::vector<PrecisionAdamW::StateTensorLayout> stateLayout() const;
  // Restores this rank's share from a consolidated state.
  void loadState(const std::function<torch::Tensor(const std::string&)>& tensor, const nlohmann::json& counts);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace plab
