#pragma once
// Data parallelism over torch.distributed (c10d): every rank draws the same
// global batch and trains on its rows, gradients are averaged before the
// precision step, and the loss figures are averaged for the metrics.
// The optimizer state is sharded over the ranks by distributed/sharded_adamw.h
// (ZeRO-1), which steps through the collectives below.
// In a world of one every call is a no-op that returns its input unchanged,
// so a single process trains bit for bit as without this class.
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "distributed/world_info.h"
#include "precision/precision_adamw.h"

namespace plab {

class ProcessGroup;  // distributed/process_group.h

class DataParallel {
 public:
  // Joins the process group (rank 0 serves the TCPStore) when the world has
  // more than one rank; throws DistributedError when the others do not come,
  // RanksDisagree when their `agreement` documents (rank_agreement.h) differ.
  DataParallel(const WorldInfo& world, const torch::Device& device, const nlohmann::json& agreement = nullptr);
  ~DataParallel();

  const WorldInfo& world() const { return world_; }
  bool active() const { return world_.distributed(); }

  // This rank's rows of a global batch: [r*B/N, (r+1)*B/N).
  torch::Tensor localRows(const torch::Tensor& globalBatch) const;
  // Gradients summed over the ranks and divided by N, in flat fp32 buckets
  // of at most 25 MiB per gradient dtype (DDP's bucket_cap_mb), in model order.
  void averageGradients(const std::vector<TrainableParam>& params, const std::string& what);
  // The ranks' mean of a value each measured on its rows.
  double mean(double local, const std::string& what);
  // True on every rank when any rank says true (a stop request).
  bool any(bool local, const std::string& what);
  // In place on the device of the reductions: the sum over the ranks, and
  // root's tensor on every rank. No-ops in a world of one.
  void sum(torch::Tensor& tensor, const std::string& what);
  void broadcast(torch::Tensor& tensor, int root, const std::string& what);
  // Point to point: only the two ranks named call them.
  void send(torch::Tensor& tensor, int dst, const std::string& what);
  void recv(torch::Tensor& tensor, int src, const std::string& what);
  const torch::Device& device() const { return device_; }
  // Every rank holds the same `document` for `topic`, or every rank throws
  // RanksDisagree naming the field (ProcessGroup::agree). A no-op in a world of one.
  void agree(const std::string& topic, const nlohmann::json& document);
  // Best effort: tells the other ranks why this one stops, so that their
  // errors name it. Never throws.
  void announceFailure(const std::string& message) noexcept;

 private:
  void averageBucket(std::vector<torch::Tensor>& grads, const std::string& what);

  WorldInfo world_;
  torch::Device device_;  // NCCL reduces on the device
  std::unique_ptr<ProcessGroup> group_;
};

// {"parameters": {"count", "elements", "layout_sha256"}}: what the ranks'
// reductions are sized by (every parameter's name, dtype and shape, in
// order), for DataParallel::agree before the optimizer is built.
nlohmann::json parameterLayoutDocument(const std::vector<TrainableParam>& params);

}  // namespace plab
