#pragma once
// Which process of a data-parallel job this is, as torchrun (and
// `precision-lab-cli run --nproc N`) describe it in the environment.
// Torch-free, so that the CLI and the UI can ask without LibTorch headers.
#include <chrono>
#include <stdexcept>
#include <string>

namespace plab {

// The default of PLAB_DIST_TIMEOUT_S: a lone rank, or one whose peer hangs,
// says so within two minutes. Steps or checkpoints that keep the ranks
// apart longer (a large model on a slow disk) need it raised.
inline constexpr std::chrono::seconds kDefaultDistTimeout{120};

struct WorldInfo {
  int rank = 0;
  int worldSize = 1;
  int localRank = 0;
  std::string masterAddr;  // rank 0's TCPStore
  int masterPort = 0;
  // How long any wait for a peer lasts before it fails: the rendezvous
  // (connecting to the store, the first exchange), every collective and the
  // agreement on the run's settings.
  std::chrono::seconds timeout{kDefaultDistTimeout};

  bool distributed() const { return worldSize > 1; }
  bool writesOutputs() const { return rank == 0; }
};

// RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT and
// PLAB_DIST_TIMEOUT_S (seconds, default kDefaultDistTimeout). None of the first five set: a
// world of one, no process group. Set but inconsistent: ConfigError.
WorldInfo worldFromEnvironment();

// The test-only crash of training/distributed tests: PLAB_TEST_DIST_EXIT=RANK:STEP
// makes that rank end at once (no cleanup, exit code 3) when it begins STEP;
// RANK:STEP:hang makes it stop there instead, alive (this call never returns).
bool testCrashRequested(const WorldInfo& world, long long step);

}  // namespace plab

namespace plab {

// A peer rank failed, timed out, or the rendezvous could not be made.
struct DistributedError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// For a launcher that saw a rank die: writes `message` where the surviving
// ranks look when their collective breaks, so that their errors name the
// rank. Best effort (the store lives in rank 0); never throws.
void tellRanksOfFailure(const WorldInfo& world, const std::string& message) noexcept;

// Each rank takes batch/N rows of every global batch: N must divide it.
void checkGlobalBatch(const WorldInfo& world, long long batchSize);

}  // namespace plab
