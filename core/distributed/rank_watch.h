#pragma once
// Which rank stopped, when a collective breaks. A rank killed with SIGKILL
// cannot say so, and under torchrun no launcher tells the others; so each
// rank's heartbeat thread publishes in the rendezvous store, once a period,
// how many beats it has made and how many collectives it has entered. A
// rank whose beats stopped is gone (its process or its machine); a rank that
// beats but entered fewer collectives than this one is alive and stuck
// before the collective that broke.
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace plab {

class RankWatch {
 public:
  RankWatch(c10::intrusive_ptr<c10d::Store> store, int rank, int worldSize,
            std::chrono::milliseconds period = std::chrono::milliseconds(1000));
  ~RankWatch();
  RankWatch(const RankWatch&) = delete;
  RankWatch& operator=(const RankWatch&) = delete;

  void enterCollective() { collectives_.fetch_add(1); }
  // A sentence naming every other rank that stopped beating or has entered
  // fewer collectives than this one; "" when none did (or nobody can tell).
  // Watches for a little over two periods. Never throws.
  std::string whoStopped();

 private:
  struct Beat {
    bool seen = false;
    int64_t beats = 0, collectives = 0;
  };
  // Every rank's last published beat; false when the store is gone.
  bool readBeats(std::vector<Beat>& out);
  void beatLoop();

  c10::intrusive_ptr<c10d::Store> store_;
  int rank_, worldSize_;
  std::chrono::milliseconds period_;
  std::atomic<int64_t> collectives_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace plab
