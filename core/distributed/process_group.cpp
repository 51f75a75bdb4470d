#include "distributed/process_group.h"

#include <chrono>
#include <cstdlib>
#include <thread>

#ifdef PLAB_HAVE_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "distributed/rank_agreement.h"
#include "distributed/rank_watch.h"
#include "distributed/store_connect.h"
#endif
#ifdef PLAB_HAVE_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace plab {

#ifdef PLAB_HAVE_GLOO
namespace {

// LibTorch errors carry a backtrace after the first line.
std::string firstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

const char* const kFailedKey = "plab/failed";

// Gloo's errors open with its source file and end with advice; the middle says what happened.
std::string glooReason(const std::string& what) {
  std::string s = firstLine(what);
  if (!s.empty() && s.front() == '[')
    if (const auto close = s.find("] "); close != std::string::npos) s = s.substr(close + 2);
  if (const auto advice = s.find(" This is typically"); advice != std::string::npos) s = s.substr(0, advice);
  return s;
}

}  // namespace

struct ProcessGroup::Impl {
  WorldInfo world;
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::Backend> backend;
  std::unique_ptr<RankWatch> watch;  // names a rank that stops without saying so

  std::string who() const { return "rank " + std::to_string(world.rank) + " of " + std::to_string(world.worldSize); }

  // What a peer wrote before it stopped; waits briefly, since its message
  // may arrive just after the collective broke.
  std::string peerFailure() {
    for (int i = 0; i < 20; ++i) {
      try {
        if (store->check({kFailedKey})) {
          const std::vector<uint8_t> v = store->get(kFailedKey);
          return std::string(v.begin(), v.end());
        }
      } catch (...) {
        return "";  // the store went with rank 0
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return "";
  }

  // Runs one collective and waits for it; a failure names this rank, the
  // operation and the rank that failed: as it said so, or as the heartbeats
  // show (a rank killed outright, or stuck).
  // `collective`: every rank runs it (counted for the heartbeats), not a
  // send or receive between two ranks.
  template <typename Start>
  void run(const std::string& operation, Start start, bool collective = true) {
    if (collective) watch->enterCollective();
    try {
      start()->wait(world.timeout);
    } catch (const std::exception& e) {
      std::string peer = peerFailure();
      if (peer.empty()) peer = watch->whoStopped();
      throw DistributedError("distributed: " + who() + ": " + operation + " failed" +
                             (peer.empty() ? " (a peer rank stopped or did not answer within " +
                                                 std::to_string(world.timeout.count()) + " s)"
                                           : " because " + peer) +
                             " (" + glooReason(e.what()) + ")");
    }
  }
};

ProcessGroup::ProcessGroup(const WorldInfo& world, const torch::Device& device, const nlohmann::json& agreement)
    : impl_(std::make_unique<Impl>()) {
  impl_->world = world;
  const std::chrono::milliseconds timeout = world.timeout;
  const std::string where = world.masterAddr + ":" + std::to_string(world.masterPort);
  c10d::TCPStoreOptions options;
  options.port = static_cast<std::uint16_t>(world.masterPort);
  // Under torchrun its agent already serves the store at MASTER_PORT.
  const char* agentStore = std::getenv("TORCHELASTIC_USE_AGENT_STORE");
  options.isServer = world.rank == 0 && !(agentStore && std::string(agentStore) == "True");
  options.numWorkers = static_cast<std::size_t>(world.worldSize);
  options.waitWorkers = true;
  options.timeout = timeout;
  impl_->store = connectStoreWithin(world, options, impl_->who());
  if (!agreement.is_null()) agree("run", agreement);
  try {
    if (device.is_cuda()) {
#ifdef PLAB_HAVE_NCCL
      auto options = c10d::ProcessGroupNCCL::Options::create();
      options->timeout = timeout;
      impl_->backend = c10::make_intrusive<c10d::ProcessGroupNCCL>(impl_->store, world.rank, world.worldSize, options);
#else
      throw DistributedError("this LibTorch has no NCCL process group: run distributed on device cpu");
#endif
    } else {
      auto options = c10d::ProcessGroupGloo::Options::create(timeout);
      const char* iface = std::getenv("GLOO_SOCKET_IFNAME");
      const bool loopback = world.masterAddr == "localhost" || world.masterAddr.rfind("127.", 0) == 0;
      options->devices.push_back(iface && *iface ? c10d::ProcessGroupGloo::createDeviceForInterface(iface)
                                 : loopback      ? c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1")
                                                 : c10d::ProcessGroupGloo::createDefaultDevice());
      impl_->backend = c10::make_intrusive<c10d::ProcessGroupGloo>(impl_->store, world.rank, world.worldSize, options);
    }
    impl_->watch = std::make_unique<RankWatch>(impl_->store, world.rank, world.worldSize);
  } catch (const DistributedError&) {
    throw;
  } catch (const std::exception& e) {
    throw DistributedError("distributed: " + impl_->who() + " could not join the process group at " + where + ": " +
                           firstLine(e.what()));
  }
}

ProcessGroup::~ProcessGroup() = default;

void ProcessGroup::allReduceSum(torch::Tensor& tensor, const std::string& what) {
  std::vector<at::Tensor> tensors{tensor};
  impl_->run("all-reduce of " + what, [&] {
    c10d::AllreduceOptions options;
    options.reduceOp = c10d::ReduceOp::SUM;
    options.timeout = impl_->world.timeout;
    return impl_->backend->allreduce(tensors, options);
  });
}

void ProcessGroup::broadcast(torch::Tensor& tensor, int root, const std::string& what) {
  std::vector<at::Tensor> tensors{tensor};
  impl_->run("broadcast of " + what + " from rank " + std::to_string(root), [&] {
    c10d::BroadcastOptions options;
    options.rootRank = root;
    options.timeout = impl_->world.timeout;
    return impl_->backend->broadcast(tensors, options);
  });
}

void ProcessGroup::send(torch::Tensor& tensor, int dst, const std::string& what) {
  std::vector<at::Tensor> tensors{tensor};
  impl_->run("send of " + what + " to rank " + std::to_string(dst),
             [&] { return impl_->backend->send(tensors, dst, /*tag=*/0); }, /*collective=*/false);
}

void ProcessGroup::recv(torch::Tensor& tensor, int src, const std::string& what) {
  std::vector<at::Tensor> tensors{tensor};
  impl_->run("receive of " + what + " from rank " + std::to_string(src),
             [&] { return impl_->backend->recv(tensors, src, /*tag=*/0); }, /*collective=*/false);
}

void ProcessGroup::announceFailure(const std::string& message) noexcept {
  try {
    const std::string text = "rank " + std::to_string(impl_->world.rank) + " failed: " + message;
    impl_->store->set(kFailedKey, std::vector<uint8_t>(text.begin(), text.end()));
  } catch (...) {
  }
}

void ProcessGroup::agree(const std::string& topic, const nlohmann::json& document) {
  const WorldInfo& world = impl_->world;
  const std::string prefix = "plab/agree/" + topic + "/";
  const auto keyOf = [&](const std::string& what, int rank) { return prefix + what + std::to_string(rank); };
  const auto bytes = [](const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); };
  std::vector<std::string> published, read;
  for (int r = 0; r < world.worldSize; ++r) {
    published.push_back(keyOf("", r));
    read.push_back(keyOf("read/", r));
  }
  try {
    impl_->store->set(keyOf("", world.rank), bytes(document.dump()));
    impl_->store->wait(published, world.timeout);
  } catch (const std::exception& e) {
    std::string missing;
    try {
      for (int r = 0; r < world.worldSize; ++r)
        if (!impl_->store->check({keyOf("", r)})) missing += (missing.empty() ? "rank " : ", rank ") + std::to_string(r);
    } catch (...) {
      missing = "rank 0 (the store it served does not answer)";
    }
    throw DistributedError("distributed: " + impl_->who() + ": " + (missing.empty() ? "a rank" : missing) +
                           " did not publish its " + topic + " settings within " +
                           std::to_string(world.timeout.count()) + " s (" + glooReason(e.what()) + ")");
  }
  std::vector<nlohmann::json> documents;
  for (int r = 0; r < world.worldSize; ++r) {
    const std::vector<uint8_t> v = impl_->store->get(keyOf("", r));
    documents.push_back(peerAgreementDocument(std::string(v.begin(), v.end())));
  }
  const std::string problem = rankDisagreement(documents);
  // Rank 0 serves the store: it goes on (or stops) only once every rank has
  // read the documents, so that all of them can say why.
  try {
    impl_->store->set(keyOf("read/", world.rank), bytes("1"));
    if (world.rank == 0) impl_->store->wait(read, world.timeout);
  } catch (const std::exception&) {
    // A rank that stops now is named by the first collective.
  }
  if (!problem.empty()) throw RanksDisagree("distributed: " + problem);
}

bool processGroupsAvailable() { return true; }

void tellRanksOfFailure(const WorldInfo& world, const std::string& message) noexcept {
  try {
    c10d::TCPStoreOptions options;
    options.port = static_cast<std::uint16_t>(world.masterPort);
    options.waitWorkers = false;
    options.timeout = std::chrono::seconds(2);
    c10d::TCPStore store(world.masterAddr, options);
    store.set(kFailedKey, std::vector<uint8_t>(message.begin(), message.end()));
  } catch (...) {
  }
}

#else  // no Gloo headers at build time

struct ProcessGroup::Impl {};

ProcessGroup::ProcessGroup(const WorldInfo&, const torch::Device&, const nlohmann::json&) {
  throw DistributedError(
      "distributed: this build has no c10d process group (Gloo headers were not found at build time: install "
      "libgloo-dev and rebuild)");
}
ProcessGroup::~ProcessGroup() = default;
void ProcessGroup::allReduceSum(torch::Tensor&, const std::string&) {}
void ProcessGroup::broadcast(torch::Tensor&, int, const std::string&) {}
void ProcessGroup::send(torch::Tensor&, int, const std::string&) {}
void ProcessGroup::recv(torch::Tensor&, int, const std::string&) {}
void ProcessGroup::announceFailure(const std::string&) noexcept {}
void ProcessGroup::agree(const std::string&, const nlohmann::json&) {}
bool processGroupsAvailable() { return false; }
void tellRanksOfFailure(const WorldInfo&, const std::string&) noexcept {}

#endif

}  // namespace plab
