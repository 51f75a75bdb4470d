#pragma once
// A c10d process group: TCPStore rendezvous at MASTER_ADDR:MASTER_PORT (rank
// 0 serves it) and ProcessGroupGloo on CPU (ProcessGroupNCCL on CUDA where
// LibTorch has it). Every failed collective is a DistributedError that names
// this rank, the operation and, where it said so, the rank that failed.
#include <torch/torch.h>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "distributed/world_info.h"

namespace plab {

class ProcessGroup {
 public:
  // Meets the other ranks at the TCPStore, bounded by world.timeout however
  // the peer behaves (a listener that accepts and never answers is named as
  // such); then, when `agreement` is not null, agree("run", agreement)
  // before any collective is set up.
  ProcessGroup(const WorldInfo& world, const torch::Device& device, const nlohmann::json& agreement = nullptr);
  ~ProcessGroup();

  // Every rank publishes `document` under `topic` in the rendezvous store
  // and compares every rank's with rank 0's: on a difference every rank
  // throws RanksDisagree (distributed/rank_agreement.h) with the same
  // message naming the field and both values. Waits at most world.timeout
  // for the others (DistributedError naming who did not come).
  void agree(const std::string& topic, const nlohmann::json& document);

  // In place: the sum over the ranks.
  void allReduceSum(torch::Tensor& tensor, const std::string& what);
  // In place: root's tensor on every rank (same shape and dtype everywhere).
  void broadcast(torch::Tensor& tensor, int root, const std::string& what);
  // Point to point (only the two ranks call them): tensor to rank dst, and
  // into tensor from rank src (same shape and dtype on both).
  void send(torch::Tensor& tensor, int dst, const std::string& what);
  void recv(torch::Tensor& tensor, int src, const std::string& what);
  void announceFailure(const std::string& message) noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Whether this build can join a process group (LibTorch's Gloo headers were found).
bool processGroupsAvailable();

}  // namespace plab
